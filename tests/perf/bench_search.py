"""Search relevance: the share of a query set as people type it (tests/support/search_queries.toml:
nicknames, half-typed names, misspellings, matchups) whose expected entity is the first result
of `/v1/search`'s own query with no kind filter, per kind, over every live sample file ingested
and projected exactly as `svc sample load` and the projector do. Target: >= 0.95 top-1 for teams
and players. Also the query's own cost: median and p99 latency of the route's query per search,
against a primary-key read of one search-index row on the same connection."""

from __future__ import annotations

import statistics
import time

import asyncpg

from api.queries.search import search
from tests.perf.run import BenchContext, Figure
from tests.support.search_relevance import load_queries, relevance
from tests.support.served_pipeline import load_samples


async def run(ctx: BenchContext) -> list[Figure]:
    settings = await ctx.fresh_settings()
    await load_samples(settings)
    queries = load_queries()
    conn = await asyncpg.connect(settings.database_url)
    try:
        shares, misses = await relevance(conn, '"live"', queries)
        timings, baseline = [], []
        for _ in range(3):
            for query in queries:
                start = time.perf_counter()
                await search(conn, '"live"', q=query.q, kinds=None, competition=None, offset=0, limit=5)
                timings.append((time.perf_counter() - start) * 1000)
                start = time.perf_counter()
                await conn.fetchrow('SELECT * FROM "live".search_index WHERE id = $1', "tm_none")
                baseline.append((time.perf_counter() - start) * 1000)
    finally:
        await conn.close()
    figures = []
    for kind in ("team", "player", "game"):
        n = sum(q.kind == kind for q in queries)
        missed = [m for m in misses if any(q.q == m[0] and q.kind == kind for q in queries)]
        figures.append(Figure(
            f"search relevance: {kind} first, {n} queries", shares[kind], "share",
            target=">= 0.95" if kind in ("team", "player") else None,
            note="missed: " + ("; ".join(f"{q!r} -> {first}" for q, _, first in missed) or "none"),
        ))
    timings.sort()
    baseline.sort()
    figures.append(Figure(
        "search query (candidates + ranking + page), median", statistics.median(timings), "ms",
        "primary-key read of one index row, median", statistics.median(baseline),
        note=f"p99 {timings[int(len(timings) * 0.99) - 1]:.2f} ms over {len(timings)} searches",
    ))
    return figures
