"""Access control through HTTP on the real app: keys, scopes, rate windows, credits, status.

Each test has its own database and its own Redis key prefix (the settings' namespace), so runs
never share counters. Redis is real when one can be had, else the in-process fallback serves.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

import asyncpg
import msgspec
import pytest

from access.keys import new_key
from access.store import revoke_key
from infra.settings import load_settings
from tests.integration.access_support import make_key, problem, serving
from tests.support.listening import eventually, listener_of, stop_listening

RATE_HEADERS = ("ratelimit", "ratelimit-policy", "x-ratelimit-limit", "x-ratelimit-remaining",
                "x-ratelimit-reset", "x-ratelimit-resource")
CREDIT_HEADERS = ("x-credits-used", "x-credits-remaining", "x-credits-last")


async def revoke_all(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        for key_id in await conn.fetch("SELECT id FROM access.api_keys"):
            await revoke_key(conn, key_id["id"])
    finally:
        await conn.close()


@pytest.fixture
def app_settings(settings, redis_url):  # noqa: F811
    return msgspec.structs.replace(settings, redis_url=redis_url)


def assert_headers_match_status(headers, body: dict) -> None:
    """The status values are also in the headers."""
    rate, credits = body["rate"], body["credits"]
    assert headers["x-ratelimit-limit"] == str(rate["limit"])
    assert headers["x-ratelimit-remaining"] == str(rate["remaining"])
    assert headers["x-ratelimit-reset"] == str(rate["reset"])
    assert headers["x-ratelimit-resource"] == rate["resource"]
    assert headers["ratelimit-policy"].split(", ")[0] == rate["policy"]
    name = rate["policy"].split(";")[0]
    assert headers["ratelimit"].split(", ")[0].startswith(f"{name};r={rate['remaining']};t=")
    assert headers["x-credits-used"] == str(credits["used"])
    assert headers["x-credits-remaining"] == str(credits["remaining"])
    assert headers["x-credits-last"] == str(credits["last"])
    assert f';q={credits["allowance"]};' in headers["ratelimit-policy"].split(", ")[1]


async def used_credits(settings, subject_like: str = "acct_%") -> dict[tuple[str, str], int]:
    conn = await asyncpg.connect(settings.database_url)
    try:
        rows = await conn.fetch("SELECT subject, mode, used FROM access.usage WHERE subject LIKE $1", subject_like)
    finally:
        await conn.close()
    return {(r["subject"], r["mode"]): r["used"] for r in rows}


# ---- status ---------------------------------------------------------------------------------


async def test_status_without_a_key(app_settings):
    async with serving(app_settings) as served, served.client("203.0.113.10") as c:
        r = await c.get("/v1/status")
        assert r.status_code == 200
        body = r.json()
        now = time.time()
        assert {k: body[k] for k in ("object", "ok", "api_version", "credential", "mode", "plan", "account_id", "scopes")} == {
            "object": "status", "ok": True, "api_version": "2026-10-05", "credential": "anonymous",
            "mode": "live", "plan": "anonymous", "account_id": None, "scopes": [],
        }
        rate = body["rate"]
        assert {k: rate[k] for k in ("policy", "limit", "remaining", "window_seconds", "resource")} == {
            "policy": '"anonymous";q=60;w=600', "limit": 60, "remaining": 59, "window_seconds": 600, "resource": "status",
        }
        assert now + 598 <= rate["reset"] <= now + 602
        credits = body["credits"]
        assert {k: credits[k] for k in ("used", "remaining", "last", "allowance")} == {
            "used": 0, "remaining": 200, "last": 0, "allowance": 200,
        }
        assert credits["period"] == "d" + time.strftime("%Y%m%d", time.gmtime(now))
        assert credits["reset"] == (int(now) // 86400 + 1) * 86400  # next UTC midnight
        assert_headers_match_status(r.headers, body)
        assert r.headers["api-version"] == "2026-10-05" and r.headers["request-id"].startswith("req_")


async def test_status_with_a_key_and_a_sequence_of_calls_adds_up(app_settings):
    key = await make_key(app_settings, "acme", "free", {"read:players", "read:odds"})
    async with serving(app_settings) as served, served.client(key=key) as c:
        first = (await c.get("/v1/status")).json()
        assert (first["credential"], first["mode"], first["plan"]) == ("key", "live", "free")
        assert first["account_id"].startswith("acct_") and len(first["account_id"]) == 25
        assert first["scopes"] == ["read:odds", "read:players"]  # sorted
        assert first["rate"]["policy"] == '"free";q=120;w=60' and first["rate"]["resource"] == "all"
        assert first["rate"]["remaining"] == 119
        assert (first["credits"]["used"], first["credits"]["allowance"], first["credits"]["last"]) == (0, 6000, 0)
        assert first["credits"]["period"].startswith("m")
        for i in range(1, 4):
            r = await c.get("/v1/_test/odds")
            assert r.status_code == 200
            assert r.headers["x-credits-used"] == str(i) and r.headers["x-credits-last"] == "1"
            assert r.headers["x-credits-remaining"] == str(6000 - i)
            assert r.headers["x-ratelimit-remaining"] == str(119 - i)  # one window for every operation
            assert r.headers["x-ratelimit-resource"] == "all"
        r = await c.get("/v1/status")
        last = r.json()
        assert last["rate"]["remaining"] == 115
        assert (last["credits"]["used"], last["credits"]["remaining"], last["credits"]["last"]) == (3, 5997, 0)
        assert last["credits"]["period"] == first["credits"]["period"]
        assert last["rate"]["reset"] == first["rate"]["reset"]  # the first call is still the oldest
        assert_headers_match_status(r.headers, last)
    assert await used_credits(app_settings) == {(first["account_id"], "live"): 3}


async def test_status_other_methods_are_405_with_allow(app_settings):
    async with serving(app_settings) as served, served.client() as c:
        for method in ("POST", "PUT", "DELETE", "PATCH"):
            r = await c.request(method, "/v1/status")
            assert r.status_code == 405
            assert problem(r)["code"] == "method_not_allowed"
            assert "GET" in [m.strip() for m in r.headers["allow"].split(",")]


# ---- keys -------------------------------------------------------------------------------------


async def test_invalid_keys_are_401_naming_authorization(app_settings):
    key = await make_key(app_settings, "acme", "free", {"read:odds"})
    conn = await asyncpg.connect(app_settings.database_url)
    revoked = await make_key(app_settings, "acme", "free", {"read:odds"})
    key_id = await conn.fetchval("SELECT id FROM access.api_keys ORDER BY created_at DESC LIMIT 1")
    await revoke_key(conn, key_id)
    await conn.close()
    unknown, _ = new_key("live")
    altered = key[:-1] + ("0" if key[-1] != "0" else "1")
    wrong_mode = key.replace("svc_live_", "svc_test_")
    bad_headers = [f"Bearer {unknown}", f"Bearer {altered}", f"Bearer {wrong_mode}", f"Bearer {revoked}",
                   "Bearer not-a-key", "Bearer ", "Basic dXNlcjpwYXNz", key]
    async with serving(app_settings) as served, served.client() as c:
        for header in bad_headers:
            for path in ("/v1/status", "/v1/_test/odds"):
                r = await c.get(path, headers={"Authorization": header})
                assert r.status_code == 401, (header, r.text)
                body = problem(r)
                assert (body["code"], body["param"], body["retryable"]) == ("unauthenticated", "Authorization", False)
                assert not any(h in r.headers for h in RATE_HEADERS + CREDIT_HEADERS)
        assert (await c.get("/v1/status", headers={"Authorization": f"Bearer {key}"})).status_code == 200


async def test_a_cached_key_is_read_once_and_its_revocation_reaches_every_call_within_moments(app_settings, monkeypatch):
    import api.access.service as service_module

    reads = []
    real_verify = service_module.verify_key

    async def counting_verify(conn, secret, key):
        reads.append(key[-4:])
        return await real_verify(conn, secret, key)

    monkeypatch.setattr(service_module, "verify_key", counting_verify)
    keys = {name: await make_key(app_settings, f"acct-{name}", "free", {"read:players", "run:answers"})
            for name in ("priced", "free_op", "scope")}
    async with serving(app_settings) as served:
        assert listener_of(served.app).connected  # the app waits for it at start-up
        for name, key in keys.items():
            async with served.client(key=key) as c:
                for _ in range(3):
                    assert (await c.get("/v1/status")).status_code == 200
        assert len(reads) == len(keys)  # one database read per key, then the cache

        await revoke_all(app_settings.database_url)
        # the revocation is announced at commit: the cached keys are dropped without any call
        service = served.app.app.state.app_state.extras["access"]

        async def cached() -> int:
            return len(service._keys)

        await eventually(cached, lambda n: n == 0)
        calls = {
            "priced": ("/v1/_test/answers", "post"),  # 1 credit
            "free_op": ("/v1/status", "get"),  # 0 credits
            "scope": ("/v1/_test/odds", "get"),  # would be 403 insufficient_scope
        }
        for name, (path, method) in calls.items():
            async with served.client(key=keys[name]) as c:
                r = await getattr(c, method)(path)
                assert r.status_code == 401, (name, r.text)
                assert (problem(r)["code"], problem(r)["param"]) == ("unauthenticated", "Authorization")
    assert await used_credits(app_settings) == {}  # nothing was charged to a revoked key


async def test_while_not_listening_every_call_of_a_cached_key_checks_it(app_settings, monkeypatch):
    """The fallback: with the listener down, a revocation (whose notification nobody hears) is
    seen by the very next call of a cached key, whatever that call costs or would be refused for."""
    keys = {name: await make_key(app_settings, f"acct-{name}", "free", {"read:players", "run:answers"})
            for name in ("priced", "free_op", "scope", "limited")}
    async with serving(app_settings) as served:
        for key in keys.values():
            async with served.client(key=key) as c:
                assert (await c.post("/v1/_test/answers")).status_code == 201  # cached, and holding a lease
        async with served.client(key=keys["limited"]) as c:
            for _ in range(119):  # the free plan's window: 120 calls per 60 s
                assert (await c.get("/v1/status")).status_code == 200
            assert (await c.get("/v1/status")).status_code == 429
        listener = await stop_listening(served.app, app_settings.database_url, monkeypatch)
        await revoke_all(app_settings.database_url)
        calls = {
            "priced": ("/v1/_test/answers", "post"),  # 1 credit, and the lease would cover it
            "free_op": ("/v1/status", "get"),  # 0 credits
            "scope": ("/v1/_test/odds", "get"),  # would be 403 insufficient_scope
            "limited": ("/v1/status", "get"),  # would be 429
        }
        for name, (path, method) in calls.items():
            async with served.client(key=keys[name]) as c:
                r = await getattr(c, method)(path)
                assert r.status_code == 401, (name, r.text)
                assert (problem(r)["code"], problem(r)["param"]) == ("unauthenticated", "Authorization")
        assert not listener.connected  # all of it without the listener
    assert sorted((await used_credits(app_settings)).values()) == [1, 1, 1, 1]  # the four answers before


async def test_a_cached_key_revoked_at_its_rate_limit_is_401_not_429(app_settings):
    key = await make_key(app_settings, "acme", "free", {"read:odds"})
    async with serving(app_settings) as served, served.client(key=key) as c:
        for _ in range(120):  # the free plan's window: 120 calls per 60 s
            assert (await c.get("/v1/_test/odds")).status_code == 200
        assert (await c.get("/v1/_test/odds")).status_code == 429
        conn = await asyncpg.connect(app_settings.database_url)
        try:
            await revoke_key(conn, await conn.fetchval("SELECT id FROM access.api_keys"))
        finally:
            await conn.close()
        seen = []

        async def call():
            r = await c.get("/v1/_test/odds")
            seen.append(r.status_code)
            return r

        r = await eventually(call, lambda r: r.status_code != 429)
        assert (r.status_code, problem(r)["code"]) == (401, "unauthenticated")
        assert set(seen) <= {429, 401}  # never admitted meanwhile


async def test_a_key_in_the_url_is_refused_even_with_a_valid_header(app_settings):
    key = await make_key(app_settings, "acme", "free", {"read:odds"})
    async with serving(app_settings) as served, served.client(key=key) as c:
        for url, param in ((f"/v1/status?api_key={key}", "api_key"), (f"/v1/_test/odds?q={key}", "q"),
                           ("/v1/status?token=abc", "token")):
            r = await c.get(url)
            assert r.status_code == 400
            body = problem(r)
            assert (body["code"], body["param"]) == ("credential_in_url", param)
    assert await used_credits(app_settings) == {}  # refused before access control: nothing counted


async def test_scopes_are_enforced_per_operation(app_settings):
    players_only = await make_key(app_settings, "acme", "free", {"read:players"})
    answers = await make_key(app_settings, "acme", "free", {"run:answers"})
    async with serving(app_settings) as served:
        async with served.client(key=players_only) as c:
            r = await c.get("/v1/_test/odds")
            assert r.status_code == 403
            body = problem(r)
            assert (body["code"], body["param"]) == ("insufficient_scope", "read:odds")
            r = await c.post("/v1/_test/answers")
            assert (r.status_code, problem(r)["param"]) == (403, "run:answers")
            assert (await c.get("/v1/status")).status_code == 200  # status needs no scope
        async with served.client(key=answers) as c:
            assert (await c.post("/v1/_test/answers")).status_code == 201
        async with served.client() as c:  # key-less: reads yes, answers need a key
            assert (await c.get("/v1/_test/odds")).status_code == 200
            r = await c.post("/v1/_test/answers")
            assert r.status_code == 401
            assert (problem(r)["code"], problem(r)["param"]) == ("unauthenticated", "Authorization")
    used = await used_credits(app_settings)
    assert list(used.values()) == [1]  # only the one 201 was charged


async def test_health_is_outside_access_control(app_settings):
    async with serving(app_settings) as served, served.client() as c:
        r = await c.get("/health", headers={"Authorization": "Bearer svc_live_nonsense"})
        assert r.status_code == 200 and r.json()["object"] == "health"
        assert not any(h in r.headers for h in RATE_HEADERS + CREDIT_HEADERS)


# ---- rate windows -----------------------------------------------------------------------------


async def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_window(app_settings):
    proxied = msgspec.structs.replace(app_settings, trusted_proxies="10.0.0.0/8")
    async with serving(proxied) as served, served.client("10.0.0.2") as proxy, served.client("203.0.113.40") as direct:
        remaining = []
        for client in ("203.0.113.31", "203.0.113.32", "203.0.113.31"):
            r = await proxy.get("/v1/_test/odds", headers={"X-Forwarded-For": f"198.51.100.99, {client}"})
            remaining.append(r.headers["x-ratelimit-remaining"])
        assert remaining == ["59", "59", "58"]  # .31 and .32 are counted apart, .31 twice
        # RFC 7239 Forwarded names the client too, and wins over X-Forwarded-For
        r = await proxy.get("/v1/_test/odds", headers={"Forwarded": 'for="203.0.113.32:5555";proto=https',
                                                       "X-Forwarded-For": "203.0.113.33"})
        assert r.headers["x-ratelimit-remaining"] == "58"  # .32's second call
        # an untrusted peer's header is not believed: both calls count against the peer itself
        spoofs = [await direct.get("/v1/_test/odds", headers={"X-Forwarded-For": f"203.0.113.{n}"}) for n in (51, 52)]
        assert [r.headers["x-ratelimit-remaining"] for r in spoofs] == ["59", "58"]
    # without trusted proxies the proxy's clients all share the proxy's window
    async with serving(app_settings) as served, served.client("10.0.0.2") as proxy:
        calls = [await proxy.get("/v1/_test/odds", headers={"X-Forwarded-For": f"203.0.113.{n}"}) for n in (61, 62)]
        assert [r.headers["x-ratelimit-remaining"] for r in calls] == ["59", "58"]


async def test_anonymous_window_is_per_address_per_operation(app_settings):
    async with serving(app_settings) as served:
        async with served.client("203.0.113.20") as c:
            results = [await c.get("/v1/_test/odds") for _ in range(61)]
            assert [r.status_code for r in results[:60]] == [200] * 60
            assert [r.headers["x-ratelimit-remaining"] for r in results[:60]] == [str(59 - i) for i in range(60)]
            assert [r.headers["x-credits-used"] for r in results[:60]] == [str(i + 1) for i in range(60)]
            refused = results[60]
            assert refused.status_code == 429
            body = problem(refused)
            assert (body["code"], body["retryable"]) == ("rate_limited", True)
            h = refused.headers
            assert (h["x-ratelimit-limit"], h["x-ratelimit-remaining"], h["x-ratelimit-resource"]) == ("60", "0", "test.odds")
            assert h["ratelimit-policy"] == '"anonymous";q=60;w=600'
            t = int(h["ratelimit"].rsplit("t=", 1)[1])
            assert 595 <= t <= 600 and int(h["retry-after"]) == max(1, t)
            assert int(h["x-ratelimit-reset"]) == int(results[0].headers["x-ratelimit-reset"])
            assert "x-credits-used" not in h
            # another operation has a window of its own, and the refused call cost nothing
            status = await c.get("/v1/status")
            assert status.status_code == 200
            assert (status.json()["rate"]["resource"], status.json()["rate"]["remaining"]) == ("status", 59)
            assert status.json()["credits"]["used"] == 60
        async with served.client("203.0.113.21") as c:  # another address: its own windows and allowance
            r = await c.get("/v1/_test/odds")
            assert (r.status_code, r.headers["x-ratelimit-remaining"], r.headers["x-credits-used"]) == (200, "59", "1")


async def test_account_window_spans_operations_and_refusals_cost_nothing(app_settings):
    live = await make_key(app_settings, "acme", "free", {"read:odds"})
    sandbox = await make_key(app_settings, "acme", "free", {"read:odds"}, mode="test")
    async with serving(app_settings) as served:
        async with served.client(key=live) as c:
            paths = ["/v1/status", "/v1/_test/odds"] * 60
            responses = await asyncio.gather(*(c.get(p) for p in paths))
            assert [r.status_code for r in responses] == [200] * 120
            refused = await c.get("/v1/_test/odds")
            assert refused.status_code == 429
            assert (problem(refused)["code"], problem(refused)["retryable"]) == ("rate_limited", True)
            assert refused.headers["x-ratelimit-resource"] == "all"
            assert refused.headers["x-ratelimit-limit"] == "120" and refused.headers["x-ratelimit-remaining"] == "0"
            assert int(refused.headers["retry-after"]) >= 1
        async with served.client(key=sandbox) as c:  # test-mode keys: a window and allowance of their own
            r = await c.get("/v1/status")
            assert r.status_code == 200 and r.json()["rate"]["remaining"] == 119
    used = await used_credits(app_settings)
    assert sorted(used.values()) == [60]  # 60 charged reads; the refused one cost nothing


# ---- credits ----------------------------------------------------------------------------------


async def test_quota_exhausted_and_status_still_answers(app_settings):
    key = await make_key(app_settings, "acme", "free", {"read:odds"})
    sandbox = await make_key(app_settings, "acme", "free", {"read:odds"}, mode="test")
    async with serving(app_settings) as served, served.client(key=key) as c:
        status = (await c.get("/v1/status")).json()
        conn = await asyncpg.connect(app_settings.database_url)
        await conn.execute(
            "INSERT INTO access.usage (subject, mode, period, used) VALUES ($1, 'live', $2, 5999)",
            status["account_id"], status["credits"]["period"],
        )
        await conn.close()
        last = await c.get("/v1/_test/odds")
        assert last.status_code == 200
        assert (last.headers["x-credits-used"], last.headers["x-credits-remaining"]) == ("6000", "0")
        refused = await c.get("/v1/_test/odds")
        assert refused.status_code == 429
        body = problem(refused)
        assert (body["code"], body["retryable"]) == ("quota_exhausted", False)
        h = refused.headers
        assert (h["x-credits-used"], h["x-credits-remaining"], h["x-credits-last"]) == ("6000", "0", "0")
        credits_t = int(h["ratelimit"].split(", ")[1].rsplit("t=", 1)[1])
        assert int(h["retry-after"]) >= credits_t > 0
        assert h["ratelimit"].split(", ")[1].startswith('"free-credits";r=0;')
        after = await c.get("/v1/status")  # never refused for quota
        assert after.status_code == 200
        assert (after.json()["credits"]["used"], after.json()["credits"]["remaining"]) == (6000, 0)
        assert after.json()["credits"]["reset"] == status["credits"]["reset"]
    async with serving(app_settings) as served, served.client(key=sandbox) as c:
        r = await c.get("/v1/_test/odds")  # the sandbox draws on its own allowance
        assert r.status_code == 200 and r.headers["x-credits-used"] == "1"


async def test_only_2xx_responses_are_charged(app_settings):
    key = await make_key(app_settings, "acme", "free", {"read:odds"})
    async with serving(app_settings) as served, served.client(key=key) as c:
        ok = await c.get("/v1/_test/odds")
        assert ok.headers["x-credits-used"] == "1"
        not_found = await c.get("/v1/_test/odds", params={"fail": 404})
        assert not_found.status_code == 404
        assert (not_found.headers["x-credits-used"], not_found.headers["x-credits-last"]) == ("1", "0")
        invalid = await c.get("/v1/_test/odds", params={"fail": "abc"})
        assert invalid.status_code == 400 and problem(invalid)["code"] == "invalid_request"
        assert (invalid.headers["x-credits-used"], invalid.headers["x-credits-last"]) == ("1", "0")
        status = (await c.get("/v1/status")).json()
        assert status["credits"]["used"] == 1
    assert list((await used_credits(app_settings)).values()) == [1]


async def test_metering_survives_an_api_restart(app_settings):
    key = await make_key(app_settings, "acme", "pro", {"read:odds"})
    async with serving(app_settings) as served, served.client(key=key) as c:
        for _ in range(5):
            assert (await c.get("/v1/_test/odds")).status_code == 200
    async with serving(app_settings) as served, served.client(key=key) as c:  # a new process
        status = (await c.get("/v1/status")).json()
        assert (status["credits"]["used"], status["credits"]["allowance"]) == (5, 25_000)


async def test_without_a_database_key_less_calls_still_have_a_rate_window(tmp_path, redis_url):  # noqa: F811
    bare = load_settings(env={}, use_stack=False, data_dir=tmp_path / "svc", key_secret="s", redis_url=redis_url,
                         topic_namespace=f"t{time.time_ns()}.")
    async with serving(bare) as served, served.client() as c:
        r = await c.get("/v1/status")
        assert r.status_code == 200
        body = r.json()
        assert body["credits"] is None and body["rate"]["remaining"] == 59
        assert "x-credits-used" not in r.headers and r.headers["ratelimit-policy"] == '"anonymous";q=60;w=600'
        key, _ = new_key("live")
        r = await c.get("/v1/status", headers={"Authorization": f"Bearer {key}"})
        assert (r.status_code, problem(r)["code"]) == (503, "service_unavailable")


# ---- OpenAPI ----------------------------------------------------------------------------------


async def test_openapi_documents_access_on_every_metered_operation(app_settings):
    async with serving(app_settings) as served, served.client() as c:
        document = (await c.get("/schema/openapi.json")).json()
    operations = {(path, method): op for path, item in document["paths"].items() for method, op in item.items()}
    odds = operations[("/v1/_test/odds", "get")]
    assert {"401", "403", "429", "503"} <= set(odds["responses"])
    codes_429 = {e["value"]["code"] for e in odds["responses"]["429"]["content"]["application/problem+json"]["examples"].values()}
    assert codes_429 == {"rate_limited", "quota_exhausted"}
    assert "Retry-After" in odds["responses"]["429"]["description"]
    assert {"RateLimit", "RateLimit-Policy", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset",
            "X-RateLimit-Resource", "X-Credits-Used", "X-Credits-Remaining", "X-Credits-Last"} <= set(odds["responses"]["200"]["headers"])
    assert odds["security"] == [{}, {"bearer": []}]
    assert operations[("/v1/_test/answers", "post")]["security"] == [{"bearer": []}]
    status = operations[("/v1/status", "get")]
    assert "403" not in status["responses"] and "429" in status["responses"]
    codes_429 = {e["value"]["code"] for e in status["responses"]["429"]["content"]["application/problem+json"]["examples"].values()}
    assert codes_429 == {"rate_limited"}  # status costs nothing, so never quota_exhausted
    assert "401" not in operations[("/health", "get")]["responses"]
    assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"


# ---- credit leases ----------------------------------------------------------------------------


async def test_two_processes_leasing_credits_never_overrun_the_allowance(app_settings):
    """Two API processes (two apps, each its own pool and leases) spend one account's last 100
    credits concurrently: never more than 100 admitted, and the durable count is exact once
    both have stopped (unspent leases returned)."""
    key = await make_key(app_settings, "acme", "pro", {"read:odds"})  # 25,000 credits: blocks of up to 25
    async with serving(app_settings) as first, serving(app_settings) as second:
        async with first.client(key=key) as a, second.client(key=key) as b:
            status = (await a.get("/v1/status")).json()
            conn = await asyncpg.connect(app_settings.database_url)
            await conn.execute("INSERT INTO access.usage (subject, mode, period, used) VALUES ($1, 'live', $2, 24900)",
                               status["account_id"], status["credits"]["period"])
            await conn.close()
            responses = await asyncio.gather(*(c.get("/v1/_test/odds") for _ in range(70) for c in (a, b)))
            admitted = [r for r in responses if r.status_code == 200]
            refused = [r for r in responses if r.status_code != 200]
            assert all(problem(r)["code"] == "quota_exhausted" for r in refused)
            assert 100 - 25 <= len(admitted) <= 100  # another process may hold a few unspent at the end
            # every admission was told a distinct count within the allowance
            used = sorted(int(r.headers["x-credits-used"]) for r in admitted)
            assert len(set(used)) == len(used) and used[-1] <= 25_000
    assert await used_credits(app_settings) == {(status["account_id"], "live"): 24_900 + len(admitted)}


async def test_a_lease_keeps_the_durable_count_within_a_block_and_goes_back_when_idle(app_settings, monkeypatch):
    import access.leases as leases
    import api.access.service as service_module

    key = await make_key(app_settings, "acme", "free", {"read:odds"})  # 6,000 credits: blocks of up to 6
    async with serving(app_settings) as served, served.client(key=key) as c:
        told = [int((await c.get("/v1/_test/odds")).headers["x-credits-used"]) for _ in range(10)]
        assert told == list(range(1, 11))  # exact for the caller, whatever the lease holds
        (durable,) = (await used_credits(app_settings)).values()
        assert 10 <= durable <= 10 + 6
        # an idle lease is returned by the background sweep, with the process still serving
        monkeypatch.setattr(leases, "IDLE_SECONDS", 0.0)
        monkeypatch.setattr(service_module, "LEASE_SWEEP_SECONDS", 0.05)
        service = served.app.app.state.app_state.extras["access"]
        service._sweeper.cancel()  # sleeping its old period: start it again with the short one
        with contextlib.suppress(asyncio.CancelledError):
            await service._sweeper
        service._sweep_later()

        async def durable_now() -> int:
            return next(iter((await used_credits(app_settings)).values()))

        assert await eventually(durable_now, lambda used: used == 10) == 10
        r = await c.get("/v1/_test/odds")  # and the next call takes a new block
        assert (r.status_code, r.headers["x-credits-used"]) == (200, "11")
