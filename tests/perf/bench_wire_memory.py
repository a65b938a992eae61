"""What an idle Wire socket costs the API process, and what it gives back when it closes.

The served API (one worker, started as `svc up` starts it: infra/api_server.py) with 1,000 idle
sockets, each authenticated (its ticket redeemed, its session opened, counted in Postgres) and
its hello read, from 200 loopback addresses (tests/support/wire_sockets.py). Two rounds on one
process: the first grows the process's pools, the second shows what a socket costs once they
are warm, and whether closing gives it back. Once under each server SVC_API_SERVER offers
(h2corn, granian, uvicorn). Baseline, same run: the same 1,000 sockets against the least an ASGI
WebSocket costs under the same server (tests/perf/bare_ws_app.py: accept, hello, wait).
Figures are the resident size (RSS) of the serving process (with a worker of its own where the server has one) per socket.
"""

from __future__ import annotations

import asyncio

import psutil

from infra.api_server import SERVERS
from infra.topics import ensure_topics
from tests.perf.run import BenchContext, Figure
from tests.support.live_server import api_process
from tests.support.wire_sockets import BATCH, PER_ADDRESS, _rss, measure, serving

SOCKETS = 1_000
KIB = 1024


async def _bare(ctx: BenchContext, settings, server: str) -> tuple[float, float]:
    """Per socket open and kept after close, against the bare app (second round, as for the API)."""
    from websockets.asyncio.client import connect as ws_connect

    out = []
    with api_process(settings.database_url, settings.data_dir, settings.key_secret,
                     ctx.workdir / f"bare-ws-{server}.log", app="tests.perf.bare_ws_app:app",
                     SVC_API_SERVER=server) as (base, proc):
        url, process = base.replace("http://", "ws://") + "/", psutil.Process(proc.pid)
        for _ in range(2):
            await asyncio.sleep(1)
            before = _rss(process)
            sockets = []
            for i in range(0, SOCKETS, BATCH):
                sockets += await asyncio.gather(*(
                    ws_connect(url, subprotocols=["svc.v1"], local_addr=(f"127.{1 + j // PER_ADDRESS // 250}."
                                                                         f"{1 + j // PER_ADDRESS % 250}.1", 0),
                               ping_interval=None)
                    for j in range(i, min(SOCKETS, i + BATCH))))
            for ws in sockets:
                await ws.recv()
            await asyncio.sleep(1)
            opened = _rss(process)
            await asyncio.gather(*(ws.close() for ws in sockets))
            await asyncio.sleep(2)
            out.append(((opened - before) / SOCKETS, (_rss(process) - before) / SOCKETS))
    return out[-1]


async def run(ctx: BenchContext) -> list[Figure]:
    settings = await ctx.fresh_settings()
    await ensure_topics(settings)  # the fan-out reads both datasets' wire.deltas
    figures = []
    for server in SERVERS:
        async with serving(settings, ctx.workdir, server) as (url, proc):
            first = await measure(settings, url, proc, SOCKETS)
            second = await measure(settings, url, proc, SOCKETS)
        for round_ in (first, second):
            assert not round_.errors and round_.rows_open == SOCKETS and round_.rows_closed == 0, round_
        bare_open, bare_kept = await _bare(ctx, settings, server)
        bare = f"bare ASGI WebSocket under {server}"
        note = f"{SOCKETS} idle sockets, 5 per loopback address; {server} 1 worker; RSS of its processes"
        figures += [
            Figure(f"{server}: API RSS per open idle Wire socket (warm: second round)", second.per_socket / KIB,
                   "KiB", bare, bare_open / KIB, "<= 20 KiB", note),
            Figure(f"{server}: API RSS per open idle Wire socket (first round)", first.per_socket / KIB, "KiB",
                   bare, bare_open / KIB, "-", "the process's pools grow"),
            Figure(f"{server}: RSS kept per socket after all closed (second round)", second.kept_per_socket / KIB,
                   "KiB", bare, bare_kept / KIB, "-", "over the second round's start"),
            Figure(f"{server}: RSS kept per socket after all closed (first round)", first.kept_per_socket / KIB,
                   "KiB", bare, bare_kept / KIB, "-", "pools grown once, reused by the second round"),
        ]
    return figures
