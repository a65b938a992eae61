"""The Python client's overhead over raw httpx for a page of games.

Same served app (granian, one worker, tests/perf/api_bench_app.py) over the sample read models,
same keep-alive connection pool, sequential calls of GET /v1/games?...&limit=50 from one
process: `Client.games.list` (headers, typed msgspec decode into Game structs, a Page) against
`httpx.Client.get(...).json()` (plain dicts). Both walls include the server's time, so the ratio
is what a caller pays end to end; the decode figures isolate the client-side work on the same
bytes. Target: end to end <= 1.10 of raw httpx.
"""

from __future__ import annotations

import asyncio
import json
import time

import asyncpg
import httpx
import msgspec

import client
from access.store import create_key
from client.models import Game, ListEnvelope
from tests.perf.run import BenchContext, Figure
from tests.support import read_models
from tests.support.live_server import api_server

KEY_SECRET = "bench-secret"
CALLS = 400
PARAMS = {"competition": "nfl", "season": "2024", "limit": 50}


def _measure(base: str, key: str) -> dict[str, float]:
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=base) as raw, client.Client(base_url=base, api_key=key) as svc:
        for _ in range(20):  # warm both pools and the server's caches
            raw.get("/v1/games", params=PARAMS, headers=headers).json()
            svc.games.list(**PARAMS)
        out = {"raw": 0.0, "client": 0.0}
        for _ in range(3):  # interleaved rounds, so drift hits both alike
            t = time.perf_counter()
            for _ in range(CALLS):
                raw.get("/v1/games", params=PARAMS, headers=headers).json()
            out["raw"] += time.perf_counter() - t
            t = time.perf_counter()
            for _ in range(CALLS):
                page = svc.games.list(**PARAMS)
            out["client"] += time.perf_counter() - t
        assert len(page.data) == 50
        body = raw.get("/v1/games", params=PARAMS, headers=headers).content
    decoder = msgspec.json.Decoder(ListEnvelope[Game])
    n = 2000
    t = time.perf_counter()
    for _ in range(n):
        json.loads(body)
    out["decode_json"] = (time.perf_counter() - t) / n
    t = time.perf_counter()
    for _ in range(n):
        decoder.decode(body)
    out["decode_typed"] = (time.perf_counter() - t) / n
    out["calls"] = 3 * CALLS
    return out


async def run(ctx: BenchContext) -> list[Figure]:
    settings = await ctx.fresh_settings(key_secret=KEY_SECRET)
    conn = await asyncpg.connect(settings.database_url)
    try:
        await read_models.load(conn, "live")
        key, _ = await create_key(conn, KEY_SECRET.encode(), account="bench", plan="scale",
                                  scopes={"read:odds", "read:players", "read:reference"}, mode="live")
    finally:
        await conn.close()
    log = ctx.workdir / "client-bench.log"
    with api_server(settings.database_url, settings.data_dir, KEY_SECRET, log, app="tests.perf.api_bench_app:app") as base:
        r = await asyncio.to_thread(_measure, base, key)
    per_call = {k: r[k] / r["calls"] * 1000 for k in ("raw", "client")}
    note = f"{int(r['calls'])} sequential calls each, one keep-alive connection, granian 1 worker"
    return [
        Figure("client.games.list (page of 50) per call", per_call["client"], "ms",
               "httpx get + .json(), same calls", per_call["raw"], "<= 1.10", note),
        Figure("typed decode of the page (msgspec Game structs)", r["decode_typed"] * 1e6, "us",
               "json.loads of the same bytes", r["decode_json"] * 1e6, "-", "client-side work only"),
    ]
