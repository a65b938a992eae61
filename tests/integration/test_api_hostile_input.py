"""Hostile and malformed input against the served app on the real database (issue: malformed
bodies answered 500, lax query parsing, unbounded echoes). Every bad request is a problem
object with the right status, code and `param`; nothing is a 5xx; nothing echoes more than a
bounded piece of what was sent."""

from __future__ import annotations

import random
import re

import msgspec
import pytest
from litestar.routes import HTTPRoute
from litestar.testing import AsyncTestClient

from access.plans import BASE_SCOPES
from api.app import create_app
from api.problems import CATALOG, DETAIL_MAX, ECHO_MAX
from api.request_checks import query_rules, reads_body
from api.time_zones import zone_names
from tests.support.api_fixtures import READ_SCOPES, make_key

JSON = {"content-type": "application/json"}
PROBLEM_FIELDS = {"type", "title", "status", "code", "detail", "param", "doc_url", "request_id", "retryable", "display_message"}
_PATH_PARAM = re.compile(r"\{([a-z_]+)(:[a-z]+)?\}")


@pytest.fixture(scope="module")
async def client(api_settings, api_db):
    """The served app with a live key holding every scope a key may have on its plan, so each
    POST route reaches its body checks."""
    key = await make_key(api_db, "hostile", READ_SCOPES | BASE_SCOPES)
    app = create_app(api_settings)
    async with AsyncTestClient(app=app) as c:
        c.headers["Authorization"] = f"Bearer {key}"
        yield c, app


def problem_of(r, status: int, code: str, param: str | None) -> dict:
    assert r.status_code == status, r.text[:500]
    assert r.headers["content-type"].startswith("application/problem+json")
    body = r.json()
    assert set(body) == PROBLEM_FIELDS
    assert (body["code"], body["param"]) == (code, param), body
    return body


def post_routes(app) -> list[tuple[str, object]]:
    """Every POST route of the app as a concrete path (path parameters filled), with its handler."""
    out = []
    for route in app.app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        for handler in route.route_handlers:
            if "POST" in handler.http_methods:
                out.append((_PATH_PARAM.sub("zz_not_a_name", route.path), handler))
    return out


def example_body(handler) -> dict:
    """The route's own documented request example (every route that reads a body has one)."""
    examples = getattr(handler.parsed_fn_signature.parameters["data"].kwarg_definition, "examples", None) or []
    return examples[0].value if examples else {}


# (body, headers, status, code, param): what a route that reads a JSON body answers
MALFORMED = [
    (b"\xff", JSON, 400, "invalid_request", "body"),
    (b'{"price": "\xff\xfe"}', JSON, 400, "invalid_request", "body"),
    (b'{"price": "1.91", "format": "dec\xc3"}', JSON, 400, "invalid_request", "body"),
    (b"[" * 10_000, JSON, 400, "invalid_request", "body"),
    (b"[" * 10_000 + b"]" * 10_000, JSON, 400, "invalid_request", "body"),
    (b'{"a":' * 10_000 + b"1" + b"}" * 10_000, JSON, 400, "invalid_request", "body"),
    (b"{not json", JSON, 400, "invalid_request", "body"),
    (b'{"price": NaN}', JSON, 400, "invalid_request", "body"),
    (b"", JSON, 400, "invalid_request", "body"),
    (b"", {}, 400, "invalid_request", "body"),
    (b'{"price": "1.91"}', {"content-type": "text/plain"}, 415, "unsupported_media_type", "Content-Type"),
    (b'{"price": "1.91"}', {"content-type": "application/x-www-form-urlencoded"}, 415, "unsupported_media_type", "Content-Type"),
    (b'{"price": "1.91"}', {"content-type": "application/json; charset=latin-1"}, 415, "unsupported_media_type", "Content-Type"),
    (b'{"price": "1.91"}', {}, 415, "unsupported_media_type", "Content-Type"),
]


def _names(body: bytes) -> str:
    return body[:12].decode("latin-1")


@pytest.mark.parametrize("body,headers,status,code,param", MALFORMED, ids=[_names(m[0]) + str(i) for i, m in enumerate(MALFORMED)])
async def test_every_post_route_answers_malformed_bodies_with_the_right_problem(client, body, headers, status, code, param):
    c, app = client
    routes = post_routes(app)
    assert len([p for p, h in routes if reads_body(h)]) >= 10  # the calculations and the ticket route
    for path, handler in routes:
        r = await c.post(path, content=body, headers=headers)
        assert r.status_code < 500, (path, r.text[:300])
        if reads_body(handler):
            problem_of(r, status, code, param)
        else:  # the unknown calculation: whatever the body, there is nothing there
            problem_of(r, 404, "not_found", "name")


async def test_a_body_over_the_routes_limit_is_413(client):
    c, app = client
    for path, handler in post_routes(app):
        if not reads_body(handler):
            continue
        limit = handler.resolve_request_max_body_size()
        r = await c.post(path, content=b" " * (limit + 1), headers=JSON)
        body = problem_of(r, 413, "payload_too_large", "body")
        assert f"{limit:,}" in body["detail"]


async def test_fuzzed_bodies_never_answer_5xx(client):
    """Every POST route, its own example body damaged at random (seeded, so a failure replays):
    bytes flipped, cut, duplicated, values swapped for hostile JSON."""
    c, app = client
    rng = random.Random(20261126)
    hostile_values = [1e308, -1e308, 10**400, "\x00", "\u202e", "x" * 100_000, [], {}, None, True, "NaN",
                      "Infinity", "-0", "1/0", "0/0", "99999999999999999999/1", [[[[[]]]]], {"a": {"b": {}}}]
    seen: dict[int, int] = {}
    for path, handler in post_routes(app):
        if not reads_body(handler):
            continue
        base = msgspec.json.encode(example_body(handler))
        for _ in range(60):
            choice = rng.random()
            if choice < 0.4:
                raw = bytearray(base)
                for _ in range(rng.randint(1, 4)):
                    raw[rng.randrange(len(raw))] = rng.randrange(256)
                body = bytes(raw)
            elif choice < 0.6:
                body = base[: rng.randrange(len(base))]
            else:
                doc = msgspec.json.decode(base)
                field = rng.choice(list(doc))
                doc[field] = rng.choice(hostile_values)
                body = msgspec.json.encode(doc)
            r = await c.post(path, content=body, headers=JSON)
            assert r.status_code < 500, (path, body[:200], r.text[:300])
            if r.status_code >= 400:
                assert r.json()["code"] in CATALOG
            seen[r.status_code] = seen.get(r.status_code, 0) + 1
    assert seen.get(400, 0) > 0 and seen.get(200, 0) + seen.get(201, 0) > 0  # both kinds were exercised


# (path, param): every enumerated query parameter refuses `null` and an empty value
async def test_every_enumerated_query_parameter_is_checked_null_and_empty_included(client):
    c, app = client
    checked = 0
    for route in app.app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        for handler in route.route_handlers:
            if "GET" not in handler.http_methods:
                continue
            path = route.path.replace("{game_id:str}", "gm_00000000000000000000").replace(
                "{market_id:str}", "mkt_00000000000000000000").replace("{player_id:str}", "plr_00000000000000000000")
            if "{" in path:
                continue
            base = {"game_id": "gm_00000000000000000000"} if path == "/v1/markets" else {}
            if path == "/v1/search":
                base = {"q": "chiefs"}
            for name, rule in query_rules(handler).items():
                if rule.allowed is None:
                    continue
                for bad in ("null", "", "NULL", rule.allowed[0].upper() + "x"):
                    r = await c.get(path, params={**base, name: bad})
                    problem_of(r, 400, "invalid_request", name)
                    checked += 1
    assert checked >= 5 * 4  # games, slate, markets list and detail, search at least


@pytest.mark.parametrize("path,param", [
    ("/v1/games?status=null", "status"),
    ("/v1/slate?status=null", "status"),
    ("/v1/slate?date=null", "date"),
    ("/v1/slate?date=", "date"),
    ("/v1/slate?tz=localtime", "tz"),
    ("/v1/slate?tz=Factory", "tz"),
    ("/v1/slate?tz=posixrules", "tz"),
    ("/v1/slate?tz=..%2F..%2Fetc%2Fpasswd", "tz"),
    ("/v1/search?q=%ff%fe", "q"),
    ("/v1/search?q=chiefs&kind=%ff", "kind"),
    ("/v1/games?season=%c3", "season"),
    ("/v1/search?q=ok&%ff=1", "query"),
])
async def test_lax_query_values_are_refused(client, path, param):
    c, _ = client
    problem_of(await c.get(path), 400, "invalid_request", param)


async def test_every_iana_zone_is_taken_and_only_those(client):
    c, _ = client
    names = zone_names()
    assert "Europe/London" in names and "America/New_York" in names and "UTC" in names
    assert not names & {"Factory", "localtime", "posixrules"} and len(names) > 500
    for tz in ("Europe/London", "UTC", "Pacific/Chatham"):
        assert (await c.get("/v1/slate", params={"tz": tz})).status_code == 200


async def test_echoed_values_are_bounded_and_marked(client):
    c, _ = client
    huge = "x" * 1_500_000
    # a body value the validator would quote whole
    r = await c.post("/v1/calculations/convert", json={"price": "1.91", "format": huge})
    body = problem_of(r, 400, "invalid_request", "format")
    assert len(r.content) < 2 * DETAIL_MAX and "truncated, 1500000 chars" in body["detail"]
    assert "x" * ECHO_MAX in body["detail"] and "x" * (ECHO_MAX + 1) not in body["detail"]
    # an unknown field named by a huge key: the param names it, bounded
    r = await c.post("/v1/calculations/convert", json={"price": "1.91", huge: 1})
    body = problem_of(r, 400, "invalid_request", "x" * ECHO_MAX + "…(truncated, 1500000 chars)")
    assert len(r.content) < 2 * DETAIL_MAX
    # query values, a path, a formula card (as long as a client library lets a URL be), a media type
    for path in ("/v1/games?status=" + "y" * 60_000, "/v1/slate?tz=" + "Europe/" * 7_000, "/v1/" + "z" * 60_000,
                 "/v1/formulas/" + "c" * 60_000):
        r = await c.get(path)
        assert 400 <= r.status_code < 500 and len(r.content) < 2 * DETAIL_MAX, (path[:40], len(r.content))
    r = await c.post("/v1/calculations/convert", content=b"{}", headers={"content-type": "text/" + "p" * 100_000})
    problem_of(r, 415, "unsupported_media_type", "Content-Type")
    assert len(r.content) < 2 * DETAIL_MAX


async def test_client_request_id_is_bounded_and_never_echoed_when_refused(client):
    c, _ = client
    ok = "a" * 255
    r = await c.get("/v1/sports", headers={"Client-Request-Id": ok})
    assert r.status_code == 200 and r.headers["client-request-id"] == ok
    for bad in (b"a" * 256, b"a" * 8192, b"has space", b"tab\there", "caf\u00e9".encode(), b"x\x7f"):
        r = await c.get("/v1/sports", headers={"Client-Request-Id": bad})
        problem_of(r, 400, "invalid_request", "Client-Request-Id")
        assert r.headers["client-request-id"] == "" and bad.decode("latin-1") not in r.text
    # refused for another reason, an invalid one is still not echoed
    r = await c.get("/v1/games?api_key=svc_live_x", headers={"Client-Request-Id": "b" * 8192})
    problem_of(r, 400, "credential_in_url", "api_key")
    assert r.headers["client-request-id"] == ""
