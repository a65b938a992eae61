"""`svc mcp`: the API's reads and calculations as MCP tools, driven by the MCP SDK's own client
(`ClientSession` over stdio and streamable HTTP) against the served API (granian, the sample read
models in real Postgres). A tool answers what the REST route answers to the same key; the key's
scopes, plan and credits are the API's to apply; a problem comes back as a tool error carrying
its code. Each `svc mcp` process costs seconds to start (the SDK's imports and the OpenAPI
document), so there are two: one over stdio, one over HTTP serving three callers."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from infra.net import free_port
from tests.support.api_fixtures import KEY_SECRET, make_key
from tests.support.live_server import ROOT, api_server
from tests.support.processes import stop

SVC = str(Path(sys.executable).with_name("svc"))
DAY = {"date": "2024-09-08", "tz": "America/New_York"}
VOLATILE = ("request_id", "as_of")  # differ between any two calls


@pytest.fixture(scope="module")
def base(api_db, api_keys, tmp_path_factory):
    logs = tmp_path_factory.mktemp("mcp-api")
    with api_server(api_db, logs, KEY_SECRET, logs / "api.log") as url:
        yield url


@pytest.fixture(scope="module")
async def players_key(api_db) -> str:
    """A key without `read:odds`: games and markets are refused to it."""
    return await make_key(api_db, "mcp-tests", {"read:players"}, plan="free")


@contextlib.asynccontextmanager
async def stdio_session(base: str, key: str | None):
    env = {"SVC_LOG_LEVEL": "warning", **({"SVC_API_KEY": key} if key else {})}
    params = StdioServerParameters(command=SVC, args=["mcp", "--url", base], env=env, cwd=str(ROOT))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def rest(base: str, key: str | None, method: str, path: str, **kw) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.request(method, base + path, headers=headers, timeout=30, **kw)


def same(a, b):
    """Equal but for the members that differ between any two calls."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(k in VOLATILE or same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


async def ok(session: ClientSession, tool: str, arguments: dict) -> dict:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


async def test_stdio_tools_answer_what_the_api_answers_with_the_callers_key(base, api_keys):
    key = api_keys["live"]
    async with stdio_session(base, key) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert {"search", "list_games", "get_game", "get_slate", "list_markets", "get_market", "get_player",
                "list_formulas", "get_formula", "search_reference", "get_reference", "list_strategies",
                "get_strategy", "check_strategy", "list_recipes", "get_recipe", "answer_question", "get_answer",
                "get_status", "calculate_devig", "calculate_kelly"} <= tools.keys()
        assert tools["get_slate"].input_schema["properties"]["tz"]["description"]  # the API's own words

        # every tool a recipe names in calls.mcp is served and takes the arguments it is given
        recipes = rest(base, key, "GET", "/v1/recipes").json()["data"]
        calls = [r["calls"]["mcp"] for r in recipes if r["calls"]["mcp"]]
        assert len(calls) >= 40
        for call in calls:
            assert call["arguments"].keys() <= tools[call["tool"]].input_schema["properties"].keys()

        slate = await ok(session, "get_slate", DAY)
        assert slate["game_count"] >= 10 and slate["data"]
        assert same(slate, rest(base, key, "GET", "/v1/slate", params=DAY).json())

        game = next(g for g in slate["data"] if g["markets"])
        market = await ok(session, "get_market", {"market_id": game["markets"][0]["id"], "devig": "shin"})
        expected = rest(base, key, "GET", f"/v1/markets/{market['id']}", params={"devig": "shin"}).json()
        assert same(market, expected) and market["rg_line"] and market["devig"]["method"] == "shin"
        assert market["main_line"]["outcomes"][0]["no_vig_probability"] is not None

        body = {"odds": [-110, -105], "format": "american", "method": "power"}
        devig = await ok(session, "calculate_devig", body)
        expected = rest(base, key, "POST", "/v1/calculations/devig", json=body).json()
        assert devig["result"] == expected["result"] and devig["formula"] == "devig.power@1"
        assert devig["rg_line"] == expected["rg_line"] and devig["rg_line"]

        recipe = next(r for r in recipes if r["calls"]["mcp"] and r["lead"] == "fractional-kelly")
        call = recipe["calls"]["mcp"]
        inputs = {"probability": "0.55", "price": "2.0", "bankroll": "1000"}
        check = await ok(session, call["tool"], {**call["arguments"], "inputs": inputs, "size_stake": True})
        expected = rest(base, key, "POST", f"/v1/strategies/{call['arguments']['strategy']}:check",
                        json={"inputs": inputs, "size_stake": True, "chain": call["arguments"]["chain"]}).json()
        assert same(check, expected) and check["object"] == "strategy_check" and check["rg_line"]

        # arguments the API refuses come back as its problem; arguments no tool takes, as a tool error
        bad = await session.call_tool("calculate_devig", {"odds": [2.0]})
        assert bad.is_error and bad.structured_content["status"] == 400
        assert bad.structured_content["code"] == "invalid_request" and bad.structured_content["param"] == "odds"
        unknown = await session.call_tool("get_player", {"player_id": "plr_00000000000000000000", "x": 1})
        assert unknown.is_error and "unknown argument" in unknown.content[0].text

        # the calls were the caller's: their account paid a credit for each
        before = rest(base, key, "GET", "/v1/status").json()
        await ok(session, "list_games", {"competition": "nfl", "season": "2024", "week": 1})
        after = rest(base, key, "GET", "/v1/status").json()
        assert after["account_id"] == before["account_id"] and after["plan"] == "scale"
        assert after["credits"]["used"] == before["credits"]["used"] + 1


@contextlib.contextmanager
def http_server(base: str, log: Path):
    port = free_port()
    env = {**os.environ, "SVC_LOG_LEVEL": "warning"}
    with open(log, "ab") as out:
        proc = subprocess.Popen([SVC, "mcp", "--http", str(port), "--url", base], env=env, cwd=ROOT,
                                stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, f"svc mcp --http exited; see {log}"
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            assert time.monotonic() < deadline, f"svc mcp --http did not listen; see {log}"
            time.sleep(0.1)
        yield url
    finally:
        stop(proc)


@contextlib.asynccontextmanager
async def http_session(url: str, key: str | None):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http, \
            streamable_http_client(url, http_client=http) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def test_streamable_http_serves_each_caller_with_their_own_key(base, api_keys, players_key, tmp_path):
    with http_server(base, tmp_path / "mcp.log") as url:
        async with http_session(url, api_keys["live"]) as session:
            status = await ok(session, "get_status", {})
            assert status["plan"] == "scale" and status["credential"] != "anonymous"
            games = await ok(session, "list_games", {"competition": "nfl", "season": "2024", "week": 1})
            assert len(games["data"]) == 16
        async with http_session(url, players_key) as session:
            status = await ok(session, "get_status", {})
            assert status["plan"] == "free" and status["scopes"] == ["read:players"]
            refused = await session.call_tool("list_games", {"competition": "nfl"})
            assert refused.is_error and "insufficient_scope" in refused.content[0].text
            problem = refused.structured_content
            assert problem["code"] == "insufficient_scope" and problem["param"] == "read:odds" and problem["request_id"]
        async with http_session(url, None) as session:
            status = await ok(session, "get_status", {})
            assert status["plan"] == "anonymous"
