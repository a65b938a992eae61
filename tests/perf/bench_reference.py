"""The reference library: search latency at 64 clients over the trivial route of the same
server, and relevance (the share of the query set whose expected entry ranks in the top 3).

Served exactly as bench_api serves the read API (SVC_API_SERVER; one worker, the Scale plan's rate
window lifted), over the shipped library as the projector writes it. Baseline: GET /health on
the same server in the same run. Relevance is measured with the route's own query on the query
set in tests/support/reference_queries.toml: all of it, and the held-out part alone (never used
to tune the ranking).
"""

from __future__ import annotations

import asyncio
import shutil
from urllib.parse import quote

import asyncpg

from tests.perf.bench_api import CONNECTIONS, SECONDS, _measure
from tests.perf.run import BenchContext, Figure
from tests.support.api_fixtures import make_key
from tests.support.library_models import insert_library
from tests.support.live_server import api_server, served_by
from tests.support.relevance import TOP, load_queries, relevance

KEY_SECRET = "bench-secret"
# a misspelt slang query: full text finds nothing, so the trigram side does the work
QUERY = "viggg juice"


async def run(ctx: BenchContext) -> list[Figure]:
    settings = await ctx.fresh_settings(key_secret=KEY_SECRET)
    conn = await asyncpg.connect(settings.database_url)
    try:
        await insert_library(conn, "live")
        key = await make_key(settings.database_url, "bench", {"read:reference"}, secret=KEY_SECRET)
        queries = load_queries()
        everything, _ = await relevance(conn, '"live"', queries)
        held_out, misses = await relevance(conn, '"live"', [q for q in queries if q.held_out])
    finally:
        await conn.close()
    header = f"Authorization: Bearer {key}"
    routes = {
        "health": "/health",
        "search": f"/v1/reference?q={quote(QUERY)}",
        "topics": "/v1/reference?jurisdiction=us-nj&limit=20",
    }
    tool = "wrk -t1" if shutil.which("wrk") else "tests/perf/http_load.py"
    log = ctx.workdir / "reference-bench.log"
    with api_server(settings.database_url, settings.data_dir, KEY_SECRET, log, app="tests.perf.api_bench_app:app") as base:
        results = {}
        for name, path in routes.items():
            results[name] = await asyncio.to_thread(_measure, base + path, header)
    health = results["health"]
    note = f"{CONNECTIONS} clients, {SECONDS}s, {tool}, {served_by()} 1 worker"
    figures = []
    for name, label in (("search", f"GET /v1/reference?q={QUERY} (relevance)"),
                        ("topics", "GET /v1/reference?jurisdiction=us-nj (topic order, page of 20)")):
        r = results[name]
        figures.append(Figure(f"{label} requests/s", r["rate"], "req/s", "GET /health, same server", health["rate"],
                              None, note))
        figures.append(Figure(f"{label} p99", r["p99_ms"], "ms", "GET /health p99", health["p99_ms"], None,
                              f"p50 {r['p50_ms']:.2f} ms"))
    n, h = len(queries), sum(q.held_out for q in queries)
    figures.append(Figure(f"relevance: expected entry in the top {TOP}, all {n} queries", everything, "share",
                          target=">= 0.9"))
    figures.append(Figure(f"relevance: held-out {h} queries", held_out, "share", target=">= 0.9",
                          note="missed: " + "; ".join(f"{q!r} -> {top}" for q, _, top in misses)))
    return figures
