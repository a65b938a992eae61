"""The first-party page's routes (api/routes/site.py) on the served app and real Postgres: the
page and its session cookie, the page's slate in either dataset, and `session` Wire tickets
standing on the site's own key. The page itself runs in a browser in tests/e2e/test_slate_page.py."""

from __future__ import annotations

import asyncpg
from litestar.testing import AsyncTestClient

from access.store import revoke_key
from api.app import create_app
from schemas.cost_line import RG_LINE
from tests.integration.access_support import problem
from wire.tickets import SITE_ACCOUNT

NY = "America/New_York"


async def test_the_page_comes_with_an_http_only_same_site_session_cookie(anonymous_api):
    anonymous_api.cookies.clear()
    r = await anonymous_api.get("/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    cookie = r.headers["set-cookie"].split("; ")
    assert cookie[0].startswith("svc_session=s1.")
    assert {"HttpOnly", "SameSite=Strict", "Path=/site"} <= set(cookie) and "Secure" not in cookie
    assert "script-src 'self'" in r.headers["content-security-policy"]
    assert r.headers["cache-control"] == "no-store"
    for credential in ("svc_live_", "svc_test_", "Bearer", "wtkt_"):
        assert credential not in r.text  # no key, no ticket in the page
    for landmark in ("<header", "<main", "<footer", "<nav", 'lang="en"', 'name="viewport"'):
        assert landmark in r.text
    for asset in ("app.js", "site.css", "icon.svg"):
        a = await anonymous_api.get(f"/site/assets/{asset}")
        assert a.status_code == 200 and a.content
    assert (await anonymous_api.get("/site/assets/secret.py")).status_code == 404


async def test_the_cookie_is_secure_over_tls(api_settings):
    async with AsyncTestClient(app=create_app(api_settings), base_url="https://svc.example") as tls:
        assert "Secure" in (await tls.get("/")).headers["set-cookie"].split("; ")


async def test_the_pages_slate_needs_the_session_and_reads_either_dataset(anonymous_api, sample):
    anonymous_api.cookies.clear()
    r = await anonymous_api.get("/site/slate", params={"tz": NY, "date": "2024-09-08"})
    assert (r.status_code, problem(r)["code"], problem(r)["param"]) == (401, "unauthenticated", "Cookie")
    anonymous_api.cookies.set("svc_session", "s1.forged.1790000000.AAAAAAAAAAAAAAAAAAAAAA", path="/site")
    assert (await anonymous_api.get("/site/slate", params={"tz": NY})).status_code == 401

    anonymous_api.cookies.clear()
    await anonymous_api.get("/")  # the page's cookie
    live = (await anonymous_api.get("/site/slate", params={"tz": NY, "date": "2024-09-08"})).json()
    assert live["game_count"] == len(live["data"]) == 13 and live["rg_line"] == RG_LINE
    assert all(f"game:{g['id']}" in live["live_topics"] for g in live["data"])
    # the sandbox: its own games (the fixture's sandbox holds EPL games only), its day by default
    sandbox = await anonymous_api.get("/site/slate", params={"tz": NY, "mode": "test"})
    assert sandbox.status_code == 200, sandbox.text
    games = sandbox.json()["data"]
    assert games and {g["competition"] for g in games} == {"epl"}
    # only the page itself may call it
    r = await anonymous_api.get("/site/slate", params={"tz": NY}, headers={"Origin": "https://evil.example"})
    assert (r.status_code, problem(r)["param"]) == (403, "Origin")


async def test_session_tickets_stand_on_the_sites_own_key_until_it_is_revoked(anonymous_api, api_db):
    anonymous_api.cookies.clear()
    r = await anonymous_api.post("/site/ticket", json={"mode": "test"})
    assert (r.status_code, problem(r)["code"]) == (401, "unauthenticated")
    await anonymous_api.get("/")
    r = await anonymous_api.post("/site/ticket", json={"mode": "test"})
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["ticket"].startswith("wtkt_") and body["url"].endswith("/v1/wire") and body["mode"] == "test"
    assert r.headers["cache-control"] == "no-store"
    r = await anonymous_api.post("/site/ticket", json={"mode": "test"}, headers={"Origin": "https://evil.example"})
    assert (r.status_code, problem(r)["param"]) == (403, "Origin")

    conn = await asyncpg.connect(api_db)
    try:
        rows = await conn.fetch(
            "SELECT t.kind, t.mode, t.topics, t.account_id, k.id AS key_id, k.scopes, a.plan "
            "FROM access.wire_tickets t JOIN access.api_keys k ON k.id = t.key_id "
            "JOIN access.accounts a ON a.id = k.account_id WHERE a.name = $1", SITE_ACCOUNT)
        assert len(rows) == 1
        ticket = rows[0]
        assert (ticket["kind"], ticket["mode"], ticket["topics"]) == ("session", "test", None)
        assert ticket["account_id"].startswith("site:")  # connections count per visitor
        assert sorted(ticket["scopes"]) == ["read:odds", "wire:connect"]
        await revoke_key(conn, ticket["key_id"])
        r = await anonymous_api.post("/site/ticket", json={"mode": "live"})
        assert (r.status_code, problem(r)["code"]) == (503, "service_unavailable")  # switched off, not re-made
        assert await conn.fetchval("SELECT count(*) FROM access.api_keys k JOIN access.accounts a "
                                   "ON a.id = k.account_id WHERE a.name = $1", SITE_ACCOUNT) == 1
    finally:
        await conn.close()
