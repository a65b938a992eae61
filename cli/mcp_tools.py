"""MCP tools: the API's read operations and calculations for AI assistants (`svc mcp`).

Each tool is one call of the REST API through the Python client (client/), made with the
caller's key: over stdio the key in `SVC_API_KEY`, over streamable HTTP the `Authorization`
header of the caller's own HTTP request, passed on as it came. So the API applies every rule
once, for tools as for any other caller: scopes, the plan's rate window and credits, test keys
reading the sandbox, `rg_line` on anything touching wagering, no per-book price. A tool
answers with the API's JSON as it came (nothing added, nothing dropped); a problem comes back
as a tool error carrying the problem object (`code`, `param`, `request_id`, ...).

A tool's input schema is the operation's own: its path and query parameters and its JSON
body's members, read from the API's OpenAPI document (built from the code, as `svc openapi`
builds it), so names, types, patterns, enumerations and descriptions have one definition.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx
import msgspec

from calc.run import CALCULATIONS
from api.resources.strategies import CHECK_TOOL

INSTRUCTIONS = (
    "Sports data and betting maths from the svc API: games, slates, markets with consensus prices and "
    "no-vig probabilities, players, search, the reference library, strategies and their checks, "
    "answers, and exact calculations. Odds are information, not advice. Anything touching wagering "
    "carries `rg_line`: show it with the value. A tool error carries the API's problem object: "
    "its `code` says what to do (`insufficient_scope` names the scope in `param`; `rate_limited` "
    "and `quota_exhausted` say when to come back)."
)
REF = re.compile(r"^#/components/schemas/(.+)$")


@dataclass(frozen=True)
class ToolSpec:
    """A tool: the operation it calls (its OpenAPI path and method) and how its arguments map."""

    name: str
    method: str
    path: str
    suffix: str = ""  # appended to the called path (the check is `/v1/strategies/{id}:check`)
    renames: Mapping[str, str] = field(default_factory=dict)  # API parameter -> tool argument
    notes: Mapping[str, str] = field(default_factory=dict)  # tool argument -> its description here


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("search", "GET", "/v1/search"),
    ToolSpec("list_games", "GET", "/v1/games"),
    ToolSpec("get_game", "GET", "/v1/games/{game_id}"),
    ToolSpec("get_slate", "GET", "/v1/slate"),
    ToolSpec("list_markets", "GET", "/v1/markets"),
    ToolSpec("get_market", "GET", "/v1/markets/{market_id}"),
    ToolSpec("get_player", "GET", "/v1/players/{player_id}"),
    ToolSpec("list_sports", "GET", "/v1/sports"),
    ToolSpec("list_competitions", "GET", "/v1/competitions"),
    ToolSpec("list_formulas", "GET", "/v1/formulas"),
    ToolSpec("get_formula", "GET", "/v1/formulas/{card_id}"),
    ToolSpec("search_reference", "GET", "/v1/reference"),
    ToolSpec("get_reference", "GET", "/v1/reference/{topic_id}"),
    ToolSpec("list_strategies", "GET", "/v1/strategies"),
    ToolSpec("get_strategy", "GET", "/v1/strategies/{strategy_id}"),
    # the name and the `strategy` argument are what recipes name in `calls.mcp`
    ToolSpec(CHECK_TOOL, "POST", "/v1/strategies/{strategy_id}", suffix=":check",
             renames={"strategy_id": "strategy"},
             notes={"strategy": "The strategy's registry ID (slug, e.g. `kelly-criterion`) or `stg_` ID."}),
    ToolSpec("list_recipes", "GET", "/v1/recipes"),
    ToolSpec("get_recipe", "GET", "/v1/recipes/{recipe_id}"),
    ToolSpec("answer_question", "POST", "/v1/answers"),
    ToolSpec("get_answer", "GET", "/v1/answers/{answer_id}"),
    ToolSpec("get_status", "GET", "/v1/status"),
    *(ToolSpec(f"calculate_{name}", "POST", f"/v1/calculations/{name}") for name in CALCULATIONS),
)


@dataclass(frozen=True)
class Tool:
    spec: ToolSpec
    description: str
    input_schema: dict[str, Any]
    where: dict[str, tuple[str, str]]  # tool argument -> ("path" | "query" | "body", the API's name)


def openapi_document() -> dict[str, Any]:
    """The API's OpenAPI document, built from the code (no database, no network)."""
    from api.app import create_litestar
    from infra.settings import load_settings

    return create_litestar(load_settings(env={}, use_stack=False)).openapi_schema.to_schema()


def _refs(node: Any, found: set[str]) -> Any:
    """`node` with component references pointed at `$defs`; the names it references go in `found`."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and (m := REF.match(value)):
                found.add(m.group(1))
                out[key] = f"#/$defs/{m.group(1)}"
            else:
                out[key] = _refs(value, found)
        return out
    if isinstance(node, list):
        return [_refs(v, found) for v in node]
    return node


def _defs(names: set[str], components: Mapping[str, Any]) -> dict[str, Any]:
    """The named components and everything they reference, rewritten for `$defs`."""
    out: dict[str, Any] = {}
    todo = sorted(names)
    while todo:
        name = todo.pop()
        if name in out:
            continue
        found: set[str] = set()
        out[name] = _refs(components[name], found)
        todo.extend(sorted(found - out.keys()))
    return out


def _body_schema(schema: Mapping[str, Any], components: Mapping[str, Any]) -> Mapping[str, Any]:
    """A request body's object schema (`{"allOf": [{"$ref": ...}]}` as Litestar writes it)."""
    while True:
        if "$ref" in schema:
            schema = components[REF.match(schema["$ref"]).group(1)]  # type: ignore[union-attr]
        elif len(schema.get("allOf", ())) == 1:
            schema = schema["allOf"][0]
        else:
            return schema


def build_tools(document: Mapping[str, Any], specs: Sequence[ToolSpec] = TOOLS) -> dict[str, Tool]:
    components = document.get("components", {}).get("schemas", {})
    tools: dict[str, Tool] = {}
    for spec in specs:
        op = document["paths"][spec.path][spec.method.lower()]
        properties: dict[str, Any] = {}
        required: list[str] = []
        where: dict[str, tuple[str, str]] = {}
        found: set[str] = set()
        for p in op.get("parameters", ()):
            if p["in"] not in ("path", "query"):
                continue  # headers (Idempotency-Key, ...) are the client's business
            arg = spec.renames.get(p["name"], p["name"])
            prop = _refs(dict(p.get("schema", {})), found)
            description = spec.notes.get(arg) or p.get("description")
            if description:
                prop["description"] = description
            properties[arg] = prop
            where[arg] = (p["in"], p["name"])
            if p.get("required"):
                required.append(arg)
        body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
        if body is not None:
            obj = _body_schema(body, components)
            for name, prop in obj.get("properties", {}).items():
                properties[name] = _refs(prop, found)
                where[name] = ("body", name)
            required.extend(r for r in obj.get("required", ()) if r not in required)
        schema: dict[str, Any] = {"type": "object", "properties": properties, "required": required,
                                  "additionalProperties": False}
        if found:
            schema["$defs"] = _defs(found, components)
        text = op.get("summary") or spec.name
        if op.get("description"):
            text += "\n\n" + op["description"]
        tools[spec.name] = Tool(spec, text, schema, where)
    return tools


class ToolCallError(Exception):
    """Arguments the tool cannot turn into a call (the API judges everything else)."""


def request_for(tool: Tool, arguments: Mapping[str, Any]) -> tuple[str, str, dict[str, Any], dict[str, Any] | None]:
    """method, path, query and body of the API call a tool's arguments make."""
    unknown = sorted(set(arguments) - tool.where.keys())
    if unknown:
        raise ToolCallError(f"unknown argument(s): {', '.join(unknown)}; this tool takes "
                            f"{', '.join(sorted(tool.where)) or 'none'}")
    path, query = tool.spec.path, {}
    body: dict[str, Any] | None = {} if tool.spec.method == "POST" else None
    for arg, (place, name) in tool.where.items():
        value = arguments.get(arg)
        if place == "path":
            if value is None or value == "":
                raise ToolCallError(f"argument '{arg}' is required")
            path = path.replace("{" + name + "}", quote(str(value), safe=""))
        elif value is None:
            continue
        elif place == "query":
            query[name] = value
        else:
            assert body is not None
            body[name] = value
    return tool.spec.method, path + tool.spec.suffix, query, body


@dataclass(frozen=True)
class Caller:
    """Who is calling, as the API must see them: their own Authorization (or none: anonymous)
    and, over HTTP, their address for a trusting API (`X-Forwarded-For`)."""

    authorization: str | None = None
    forwarded_for: str | None = None

    @classmethod
    def from_key(cls, key: str | None) -> "Caller":
        return cls(authorization=f"Bearer {key}" if key else None)

    @classmethod
    def from_http(cls, request: Any) -> "Caller":
        headers = getattr(request, "headers", None) or {}
        peer = getattr(getattr(request, "client", None), "host", None)
        chain = ", ".join(h for h in (headers.get("x-forwarded-for"), peer) if h) or None
        return cls(authorization=headers.get("authorization"), forwarded_for=chain)

    def headers(self) -> dict[str, str]:
        out = {}
        if self.authorization:
            out["Authorization"] = self.authorization
        if self.forwarded_for:
            out["X-Forwarded-For"] = self.forwarded_for
        return out


def problem_of(exc: Any) -> dict[str, Any]:
    problem = exc.problem
    return {name: getattr(problem, name) for name in problem.__struct_fields__}


class Tools:
    """The tools, and what one call does: the API call, with the caller's credentials."""

    def __init__(self, base_url: str, http: httpx.AsyncClient, document: Mapping[str, Any] | None = None,
                 *, max_retry_wait: float = 10.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.http = http
        self.tools = build_tools(document if document is not None else openapi_document())
        self.max_retry_wait = max_retry_wait

    def list(self) -> list[Any]:
        import mcp_types as types

        return [types.Tool(name=t.spec.name, description=t.description, input_schema=t.input_schema,
                           annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False))
                for t in self.tools.values()]

    async def call(self, name: str, arguments: Mapping[str, Any] | None, caller: Caller) -> Any:
        import mcp_types as types
        from client import APIError, AsyncClient, SvcError

        def failed(text: str, structured: dict[str, Any] | None = None) -> Any:
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                        structured_content=structured, is_error=True)

        tool = self.tools.get(name)
        if tool is None:
            return failed(f"unknown tool: {name}")
        try:
            method, path, query, body = request_for(tool, arguments or {})
        except ToolCallError as exc:
            return failed(str(exc))
        # the key goes as the caller's own header: the client sets none of its own
        svc = AsyncClient(base_url=self.base_url, api_key=None, http_client=self.http,
                          max_retry_wait=self.max_retry_wait)
        try:
            value = await svc.request(method, path, params=query, body=body, headers=caller.headers())
        except APIError as exc:
            problem = problem_of(exc)
            text = str(exc) + (f"\nhelp: {problem['doc_url']}" if problem.get("doc_url") else "")
            return failed(text, problem)
        except SvcError as exc:
            return failed(f"the API at {self.base_url} did not answer: {exc}")
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=msgspec.json.encode(value).decode())],
            structured_content=value if isinstance(value, dict) else {"result": value},
        )


def server(tools: Tools, *, caller_of: Any) -> Any:
    """The MCP server (the SDK's low-level `Server`, so each tool's schema is the API's own);
    `caller_of(ctx)` says who made a request."""
    import mcp_types as types
    from mcp.server.lowlevel import Server

    from infra.version import VERSION

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=tools.list())

    async def call_tool(ctx: Any, params: Any) -> Any:
        return await tools.call(params.name, params.arguments, caller_of(ctx))

    return Server("svc", version=VERSION, instructions=INSTRUCTIONS,
                  get_tool_input_schema=lambda name: tools.tools[name].input_schema if name in tools.tools else None,
                  on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(base_url: str, key: str | None) -> None:
    from mcp.server.stdio import stdio_server

    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0, connect=5.0)) as http:
        app = server(Tools(base_url, http), caller_of=lambda ctx: Caller.from_key(key))
        async with stdio_server() as (read, write):
            await app.run(read, write, app.create_initialization_options())


async def serve_http(base_url: str, host: str, port: int, path: str = "/mcp") -> None:
    import uvicorn

    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0, connect=5.0)) as http:
        app = server(Tools(base_url, http), caller_of=lambda ctx: Caller.from_http(ctx.request))
        # stateless: every HTTP request stands alone and carries its own Authorization, so one
        # process serves many callers, each with their own key
        asgi = app.streamable_http_app(streamable_http_path=path, stateless_http=True, json_response=True,
                                       host=host)
        await uvicorn.Server(uvicorn.Config(asgi, host=host, port=port, log_level="warning")).serve()
