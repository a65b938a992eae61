"""Conventions every read route keeps: headers, problem objects with the exact
status, code and param of the error catalog, keyless access, the sandbox for test keys."""

from __future__ import annotations

import base64
import re

import msgspec
import pytest
from litestar.testing import AsyncTestClient

from api.app import create_app
from tests.support.sample_fold import nfl_game_id

PROBLEM_FIELDS = {"type", "title", "status", "code", "detail", "param", "doc_url", "request_id", "retryable", "display_message"}
READ_ROUTES = ("/v1/sports", "/v1/competitions", "/v1/games", "/v1/slate", "/v1/search?q=chiefs")
_ID = re.compile(r"^(spt|cmp|ssn|tm|plr|gm|mkt|req)_[0-9a-hjkmnp-tv-z]{20}$")


# (path, status, code, param): the error catalog and the route rules
BAD_REQUESTS = [
    ("/v1/games?status=paused", 400, "invalid_request", "status"),
    ("/v1/games?week=31", 400, "invalid_request", "week"),
    ("/v1/games?season=2024-2025", 400, "invalid_request", "season"),
    ("/v1/games?competition=" + "n" * 41, 400, "invalid_request", "competition"),
    ("/v1/games?from=yesterday", 400, "invalid_request", "from"),
    ("/v1/games?to=2024-09-08T00:00:00", 400, "invalid_request", "to"),
    ("/v1/games?limit=51", 400, "invalid_request", "limit"),
    # Litestar alone would read these as week 0 and limit 10, and take the last competition
    ("/v1/games?week=0.0", 400, "invalid_request", "week"),
    ("/v1/games?limit=1e1", 400, "invalid_request", "limit"),
    ("/v1/games?competition=nfl&competition=nfl", 400, "invalid_request", "competition"),
    ("/v1/games?from=2024-09-01T00:00:00Z&from=2024-09-02T00:00:00Z", 400, "invalid_request", "from"),
    ("/v1/slate?limit=2.0", 400, "invalid_request", "limit"),
    ("/v1/games?cursor=%21%21", 400, "invalid_request", "cursor"),
    ("/v1/slate?status=postponed", 400, "invalid_request", "status"),
    ("/v1/slate?limit=0", 400, "invalid_request", "limit"),
    ("/v1/slate?tz=Not/AZone", 400, "invalid_request", "tz"),
    ("/v1/slate?sport=Soccer!", 400, "invalid_request", "sport"),
    ("/v1/markets?game_id=gm_short", 400, "invalid_request", "game_id"),
    ("/v1/markets?game_id=gm_00000000000000000000&kind=parlay", 400, "invalid_request", "kind"),
    ("/v1/markets/mkt_00000000000000000000?devig=logit", 400, "invalid_request", "devig"),
    ("/v1/search?q=chiefs&kind=stadium", 400, "invalid_request", "kind"),
    ("/v1/players/plr_00000000000000000000", 404, "not_found", "player_id"),
    ("/v1/games/gm_00000000000000000000", 404, "not_found", "game_id"),
    ("/v1/markets/mkt_00000000000000000000", 404, "not_found", "market_id"),
    ("/v1/games?api_key=svc_live_abc", 400, "credential_in_url", "api_key"),
    ("/v1/search?q=x&token=abc", 400, "credential_in_url", "token"),
    ("/v1/players/plr_00000000000000000000?access_token=abc", 400, "credential_in_url", "access_token"),
    ("/v1/nothing-here", 404, "not_found", None),
]


@pytest.mark.parametrize("path,status,code,param", BAD_REQUESTS)
async def test_bad_requests_get_the_exact_problem(api, path, status, code, param):
    r = await api.get(path, headers={"Client-Request-Id": "battery-1"})
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    problem = r.json()
    assert set(problem) == PROBLEM_FIELDS
    assert (problem["status"], problem["code"], problem["param"]) == (status, code, param)
    assert problem["type"].endswith(f"/problems/{code}") and problem["request_id"] == r.headers["request-id"]
    assert r.headers["client-request-id"] == "battery-1" and r.headers["api-version"] == "2026-10-05"


async def test_version_method_and_headers(api):
    r = await api.get("/v1/games", params={"limit": 1}, headers={"Api-Version": "2026-10-05", "Client-Request-Id": "abc-1"})
    assert r.status_code == 200
    assert _ID.match(r.headers["request-id"]) and r.headers["request-id"].startswith("req_")
    assert r.headers["api-version"] == "2026-10-05" and r.headers["client-request-id"] == "abc-1"
    assert r.json()["data"][0]["request_id"] == r.headers["request-id"]
    old = await api.get("/v1/games", headers={"Api-Version": "2024-01-01"})
    assert old.status_code == 400 and old.json()["code"] == "unsupported_api_version" and old.json()["param"] == "Api-Version"
    assert "2026-10-05" in old.json()["detail"]
    post = await api.post("/v1/games")
    assert post.status_code == 405 and post.json()["code"] == "method_not_allowed" and "GET" in post.headers["allow"]
    delete = await api.delete("/v1/markets/mkt_00000000000000000000")
    assert delete.status_code == 405 and "GET" in delete.headers["allow"]


async def test_forged_cursors_are_refused_not_trusted(api):
    from api.conventions import _filters_digest

    digest = _filters_digest({})
    for position in (["x", "y"], [2**63 - 1, "gm_x"], [1], "not-a-list"):
        raw = msgspec.msgpack.encode([digest, position])
        cursor = base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
        r = await api.get("/v1/games", params={"cursor": cursor})
        assert r.status_code == 400 and r.json()["param"] == "cursor", position


async def test_every_id_and_timestamp_in_responses_keeps_the_conventions(api, sample):
    gid = nfl_game_id(next(g for g in sample.schedule if g["game_id"] == "2024_01_BAL_KC"))
    bodies = [(await api.get(p)).json() for p in (*READ_ROUTES, f"/v1/games/{gid}")]
    seen_ids = seen_times = 0

    def walk(value, key=""):
        nonlocal seen_ids, seen_times
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str) and (key == "id" or key.endswith("_id")) and key not in {"source_id"}:
            assert _ID.match(value), (key, value)
            seen_ids += 1
        elif isinstance(value, str) and (key.endswith("_at") or key in {"as_of", "source_ts", "ingest_ts"}):
            assert re.match(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$", value), (key, value)
            seen_times += 1

    for body in bodies:
        walk(body)
    assert seen_ids > 100 and seen_times > 100


async def test_keyless_callers_read_every_route(anonymous_api, sample):
    gid = nfl_game_id(next(g for g in sample.schedule if g["game_id"] == "2024_01_BAL_KC"))
    for path in (*READ_ROUTES, f"/v1/games/{gid}", f"/v1/markets?game_id={gid}"):
        r = await anonymous_api.get(path)
        assert r.status_code == 200, (path, r.text)


async def test_test_mode_keys_read_the_sandbox_only(api_settings, api_keys, sample):
    async with AsyncTestClient(app=create_app(api_settings)) as client:
        client.headers["Authorization"] = f"Bearer {api_keys['test']}"
        games = (await client.get("/v1/games", params={"limit": 50})).json()["data"]
        assert games and {g["competition"] for g in games} == {"epl"}
        # the sandbox day is the default slate day in test mode
        slate = (await client.get("/v1/slate", params={"tz": "Europe/London"})).json()
        assert slate["date"] == "2024-08-19" and [g["name"] for g in slate["data"]] == ["Tottenham Hotspur at Leicester City"]
        gid = nfl_game_id(next(g for g in sample.schedule if g["game_id"] == "2024_01_BAL_KC"))
        assert (await client.get(f"/v1/games/{gid}")).status_code == 404
        assert (await client.get("/v1/search", params={"q": "Kansas City Chiefs", "kind": "team"})).json()["data"] == []
        assert (await client.get("/v1/search", params={"q": "Tottenham", "kind": "team"})).json()["data"]
