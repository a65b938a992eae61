"""One h2corn server in this process: `python -m infra.h2corn_serve HOST PORT MODULE:APP` (how
infra/api_server.py starts a one-worker API under h2corn).

h2corn's command line always serves from a worker under its supervisor, and on SIGINT/SIGTERM
the supervisor tells the worker's Rust side to stop straight away (a pipe, not a signal): every
WebSocket is closed 1001 before the app could close it in order (api/orderly_stop.py: 4201
once its session is resumable elsewhere; SSE streams a `drain`). Served here, the stop signals
reach the loop's handlers only, which the app takes over at startup and hands on to
`Server.shutdown` when its connections are closed. Several workers use the command line
(infra/api_server.py), their sockets then closed 1001 on a stop."""

from __future__ import annotations

import asyncio
import importlib
import signal
import sys

import uvloop
from h2corn import Config, Server

from infra.api_server import H2CORN_OPTIONS


async def _serve(host: str, port: int, target: str) -> None:
    module, _, name = target.partition(":")
    app = getattr(importlib.import_module(module), name)
    server = Server(app, Config(bind=(f"{host}:{port}",), **H2CORN_OPTIONS))
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        # plain handlers, not the loop's: uvloop does not show its own, so the app could not
        # take them over (api/orderly_stop.py); this one only asks the loop to stop the server
        signal.signal(sig, lambda sig, frame: loop.call_soon_threadsafe(server.shutdown))
    await server.serve()


def main(argv: list[str]) -> None:
    host, port, target = argv
    uvloop.run(_serve(host, int(port), target))


if __name__ == "__main__":
    main(sys.argv[1:])
