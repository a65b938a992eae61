"""Crash safety: SIGKILL the projector process at random points of a long replay (while more
records keep arriving), then twice at the head while records arrive live, restart it each time, and after the final catch-up the read models are
identical to a rebuild and every topic's deltas on wire.deltas run 1..n, repeated only as exact
duplicates of the same bytes."""

from __future__ import annotations

import asyncio
import random
import signal
import time

from infra.db import connect
from tests.support import projection_events as ev
from tests.support.projection_harness import caught_up, seq_runs, start_projector, verified, wire_deltas

KILLS = 10  # during the replay
LIVE_KILLS = 2  # and then at the head, while the faust agents apply records as they arrive
GAMES = ev.schedule(40)
BOOKS = ("dk", "fd", "mgm", "czr", "pb", "br")
# small catch-up batches: each run commits often, so kills land between, during and right after
# commits, and ten runs cannot get through the log (the machine's speed does not decide that)
CATCH_UP_BATCH = 1_000
RUNNING = "projector running"  # logged once start-up is done (signal handlers in place)


async def progress(settings) -> int:
    conn = await connect(settings.database_url)
    try:
        return int(await conn.fetchval("SELECT coalesce(sum(last_offset + 1), 0) FROM live.tracking"))
    finally:
        await conn.close()


async def kill_point(settings, rng: random.Random, proc) -> None:
    """Wait for a random point of this run: during start-up and the first fold (nothing
    committed yet), or once it has committed a random 1 to 3 batches past where it started."""
    if rng.random() < 0.3:
        await asyncio.sleep(rng.uniform(0.1, 1.5))
        return
    target = await progress(settings) + rng.randint(1, 3) * CATCH_UP_BATCH
    deadline = time.monotonic() + 60
    while await progress(settings) < target and proc.poll() is None and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    await asyncio.sleep(rng.uniform(0, 0.05))  # mid-fold or mid-write of the next batch


async def test_sigkill_at_random_points_loses_and_repeats_nothing(settings, topics, tmp_path):
    rng = random.Random(20240905)
    first = [*GAMES, *ev.season_quotes(GAMES, BOOKS, 140, seed=1)]  # ~100k events
    await ev.publish(settings, first)
    published = len(first)
    log = tmp_path / "projector.log"
    behind = 0
    for kill in range(KILLS):
        proc = start_projector(settings, log, SVC_CATCH_UP_BATCH=str(CATCH_UP_BATCH))
        await kill_point(settings, rng, proc)
        assert proc.poll() is None, log.read_text()[-3000:]  # it was killed, not dead already
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        behind += await progress(settings) < published
        more = ev.season_quotes(GAMES[kill::10], BOOKS, 3, seed=100 + kill, first_minute=200 + 5 * kill,
                                tag=f"k{kill}")
        await ev.publish(settings, more)  # the log keeps growing between crashes
        published += len(more)
    assert behind == KILLS, behind  # every kill landed before the replay was through

    for kill in range(LIVE_KILLS):
        proc = start_projector(settings, log)
        assert await caught_up(settings, 120), log.read_text()[-3000:]
        burst = ev.season_quotes(GAMES[kill::5], BOOKS, 2, seed=200 + kill, first_minute=300 + 5 * kill,
                                 tag=f"live{kill}")
        await ev.publish(settings, burst)
        published += len(burst)
        await asyncio.sleep(rng.uniform(0, 0.3))
        assert proc.poll() is None, log.read_text()[-3000:]
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)

    runs = log.read_text().count(RUNNING)
    proc = start_projector(settings, log)
    try:
        assert await caught_up(settings, 120), log.read_text()[-3000:]
        deadline = time.monotonic() + 60
        while log.read_text().count(RUNNING) == runs:  # SIGTERM once it is up, for a clean stop
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            await asyncio.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    assert await progress(settings) == published

    result = await verified(settings)
    conn = await connect(settings.database_url)
    try:
        seqs = {r["topic"]: r["last_seq"] for r in await conn.fetch("SELECT * FROM live.topic_seq")}
    finally:
        await conn.close()
    assert result.identical, result.differences

    runs = seq_runs(await wire_deltas(settings))  # fails on a seq repeated with other bytes
    assert all(r == list(range(1, len(r) + 1)) for r in runs.values())
    assert {t: r[-1] for t, r in runs.items()} == seqs
