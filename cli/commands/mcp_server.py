"""`svc mcp`: the API's read operations and calculations as MCP tools for AI assistants, over
stdio (the key in `SVC_API_KEY`) or streamable HTTP (`--http PORT`: each caller's own
`Authorization` header). The tools call the REST API with the caller's key (cli/mcp_tools.py)."""

from __future__ import annotations

import os
from typing import Annotated, Optional

import typer

from cli.common import DataDir, err_console, run, settings_for


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp)


def mcp(
    url: Annotated[Optional[str], typer.Option(
        "--url", envvar="SVC_API_URL",
        help="The API's base URL [default: the API of the stack `svc up` runs]", show_default=False)] = None,
    http: Annotated[Optional[int], typer.Option(
        "--http", help="Serve streamable HTTP on this port (at /mcp) instead of stdio")] = None,
    host: Annotated[str, typer.Option("--host", help="Address to listen on with --http")] = "127.0.0.1",
    data_dir: DataDir = None,
) -> None:
    """MCP tools over stdio (key from SVC_API_KEY) or streamable HTTP (each caller's Authorization)."""
    from cli import mcp_tools

    if url is None:
        s = settings_for(data_dir)
        url = f"http://{s.host}:{s.port}"
    if http is None:
        # stdout is the protocol's: nothing else may be printed there
        run(mcp_tools.serve_stdio(url, os.environ.get("SVC_API_KEY") or None))
        return
    err_console.print(f"MCP tools at http://{host}:{http}/mcp (streamable HTTP), calling the API at {url}")
    try:
        run(mcp_tools.serve_http(url, host, http))
    except KeyboardInterrupt:
        pass
