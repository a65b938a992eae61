"""Crash safety: SIGKILL the projector process at random points of a long replay (while more
records keep arriving), restart it each time, and after the final catch-up the read models are
identical to a rebuild and every topic's deltas on wire.deltas run 1..n, repeated only as exact
duplicates of the same bytes."""

from __future__ import annotations

import asyncio
import random
import signal

from infra.db import connect
from projections.rebuild import verify
from tests.support import projection_events as ev
from tests.support.projection_harness import caught_up, seq_runs, start_projector, wire_deltas

KILLS = 10
GAMES = ev.schedule(40)
BOOKS = ("dk", "fd", "mgm", "czr", "pb", "br")


async def progress(settings) -> int:
    conn = await connect(settings.database_url)
    try:
        return int(await conn.fetchval("SELECT coalesce(sum(last_offset + 1), 0) FROM live.tracking"))
    finally:
        await conn.close()


async def test_sigkill_at_random_points_loses_and_repeats_nothing(settings, topics, tmp_path):
    rng = random.Random(20240905)
    first = [*GAMES, *ev.season_quotes(GAMES, BOOKS, 140, seed=1)]  # ~100k events
    await ev.publish(settings, first)
    published = len(first)
    log = tmp_path / "projector.log"
    behind = 0
    for kill in range(KILLS):
        proc = start_projector(settings, log)
        await asyncio.sleep(rng.uniform(0.5, 4.0))  # start-up, catch-up or after the hand-over
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        behind += await progress(settings) < published
        more = ev.season_quotes(GAMES[kill::10], BOOKS, 3, seed=100 + kill, first_minute=200 + 5 * kill,
                                tag=f"k{kill}")
        await ev.publish(settings, more)  # the log keeps growing between crashes
        published += len(more)
    assert behind >= KILLS // 2, behind  # most kills landed in the middle of the replay

    proc = start_projector(settings, log)
    try:
        assert await caught_up(settings, 120), log.read_text()[-3000:]
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    assert await progress(settings) == published

    conns = [await connect(settings.database_url) for _ in range(3)]
    try:
        result = await verify(settings, "live", *conns)
        seqs = {r["topic"]: r["last_seq"] for r in await conns[0].fetch("SELECT * FROM live.topic_seq")}
    finally:
        for c in conns:
            await c.close()
    assert result.identical, result.differences

    runs = seq_runs(await wire_deltas(settings))  # fails on a seq repeated with other bytes
    assert all(r == list(range(1, len(r) + 1)) for r in runs.values())
    assert {t: r[-1] for t, r in runs.items()} == seqs
