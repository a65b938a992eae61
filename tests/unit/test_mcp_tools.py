"""The MCP tools' definitions (cli/mcp_tools.py) read from the API's OpenAPI document (the
committed one, which test_docs_generated keeps current): every tool is an operation, its
arguments are the operation's parameters and body members, and they make the call they say."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from cli.mcp_tools import TOOLS, Caller, ToolCallError, build_tools, request_for

DOCUMENT = json.loads((Path(__file__).resolve().parents[2] / "docs" / "openapi.json").read_text())


@pytest.fixture(scope="module")
def tools():
    return build_tools(DOCUMENT)


def test_every_tool_is_an_operation_with_an_object_schema(tools):
    assert len(tools) == len(TOOLS) == len({t.name for t in TOOLS})
    for tool in tools.values():
        schema = tool.input_schema
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert set(schema["required"]) <= schema["properties"].keys() == tool.where.keys()
        assert "#/components/" not in json.dumps(schema)  # references point into the schema's own $defs
        assert tool.description


def test_schemas_are_the_operations_own(tools):
    games = DOCUMENT["paths"]["/v1/games"]["get"]["parameters"]
    week = next(p for p in games if p["name"] == "week")
    assert tools["list_games"].input_schema["properties"]["week"]["description"] == week["description"]
    assert tools["list_games"].where["from"] == ("query", "from")
    parlay = tools["calculate_parlay"].input_schema
    assert parlay["required"] == ["legs", "stake"]
    assert parlay["properties"]["legs"]["items"] == {"$ref": "#/$defs/ParlayLeg"} and "odds" in parlay["$defs"]["ParlayLeg"]["properties"]


def test_the_check_tool_takes_what_recipes_give_it(tools):
    check = tools["check_strategy"]
    assert {"strategy", "chain", "inputs", "size_stake", "jurisdiction", "format"} == check.input_schema["properties"].keys()
    assert check.input_schema["required"] == ["strategy"]
    method, path, query, body = request_for(check, {"strategy": "fractional-kelly", "chain": "C1",
                                                    "inputs": {"probability": "0.55"}, "jurisdiction": None})
    assert (method, path, query) == ("POST", "/v1/strategies/fractional-kelly:check", {})
    assert body == {"chain": "C1", "inputs": {"probability": "0.55"}}


def test_arguments_become_path_query_and_body(tools):
    assert request_for(tools["get_market"], {"market_id": "mkt_a/b", "devig": "shin"}) == (
        "GET", "/v1/markets/mkt_a%2Fb", {"devig": "shin"}, None)
    assert request_for(tools["list_sports"], {}) == ("GET", "/v1/sports", {}, None)
    assert request_for(tools["calculate_devig"], {"odds": [-110, -110], "format": "american"}) == (
        "POST", "/v1/calculations/devig", {}, {"odds": [-110, -110], "format": "american"})
    with pytest.raises(ToolCallError, match="unknown argument"):
        request_for(tools["get_game"], {"game_id": "gm_x", "season": 2024})
    with pytest.raises(ToolCallError, match="game_id"):
        request_for(tools["get_game"], {})


def test_the_caller_is_passed_on_as_they_came():
    assert Caller.from_key("svc_live_k").headers() == {"Authorization": "Bearer svc_live_k"}
    assert Caller.from_key(None).headers() == {}
    request = SimpleNamespace(headers={"authorization": "Bearer svc_test_k", "x-forwarded-for": "203.0.113.9"},
                              client=SimpleNamespace(host="198.51.100.7"))
    # the peer is appended, as a proxy does: a trusting API reads the nearest untrusted hop
    assert Caller.from_http(request).headers() == {"Authorization": "Bearer svc_test_k",
                                                   "X-Forwarded-For": "203.0.113.9, 198.51.100.7"}
    assert Caller.from_http(SimpleNamespace(headers={}, client=SimpleNamespace(host="::1"))).headers() == {
        "X-Forwarded-For": "::1"}
