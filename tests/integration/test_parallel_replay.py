"""Replay by partition in worker processes (rebuild and verify on several cores), on a real broker
and database: the scratch schema the workers build equals, row for row and seq for seq, what one
projector built live from the same log (games spread over every partition, players, teams,
seasons and sports shared across partitions); a swap of such a rebuild keeps every topic's seq;
a worker that dies fails the replay cleanly and leaves no process behind."""

from __future__ import annotations

import os
import signal

import msgspec
import pytest

from infra.db import connect
from projections.rebuild import ScratchReplay, compare, drop_schema, open_scratch, rebuild, verify
from tests.support import projection_events as ev
from tests.support.projection_harness import projector, run_to_end, seq_runs, wire_deltas

GAMES = ev.schedule(24)


def varied_log() -> list:
    """Games of two weeks in every partition, priced by several books with suspensions and
    state changes, plus teams and players (stat lines, injuries, news) on their own topics."""
    out: list = [ev.team(t) for t in ("KC", "BAL", "BUF", "DAL")]
    out += GAMES
    out += ev.season_quotes(GAMES, ["b0", "b1", "b2"], 3, seed=7)
    for i, g in enumerate(GAMES[:8]):
        out.append(ev.state(g.game_id, "live", minute=30 + i, home=i, away=i % 3))
        mid = ev.quote(g.game_id, "b0", [-110, -110]).market_id
        out.append(ev.suspended(g.game_id, mid, minute=31 + i))
        out.append(ev.reopened(g.game_id, mid, minute=33 + i))
    for n in range(6):
        p = ev.player(f"P{n}", f"Player {n}", team=("KC", "BAL")[n % 2])
        out += [p, ev.injury(p.player_id, "Questionable", minute=n), ev.news(p.player_id, f"news {n}", minute=n),
                ev.stat_line(p.player_id, GAMES[n].game_id, 1, {"passing_yards": 100 + n}, minute=n)]
    return out


def parallel(settings, workers: int = 2):
    return msgspec.structs.replace(settings, replay_workers=workers, replay_parallel_min=1)


@pytest.mark.parametrize("chunk, write_every", [(None, None), (37, 150)])
async def test_workers_build_exactly_what_one_projector_built_live(settings, topics, monkeypatch, chunk, write_every):
    """(37, 150): each worker folds 37 records at a time and writes every 150 or so, so batches
    span several folds and several writes go out per round."""
    if chunk is not None:
        monkeypatch.setattr("projections.rebuild.REBUILD_RECORDS", chunk)
        monkeypatch.setattr("projections.rebuild.REBUILD_WRITE_EVERY", write_every)
    await ev.publish(settings, varied_log())
    async with projector(settings) as live:
        applied = await run_to_end(live)
    assert applied > 500

    conn = await connect(settings.database_url)
    try:
        scratch = await open_scratch(conn, settings, "live", publish=False)
        replay = ScratchReplay(scratch, conn, parallel(settings))
        try:
            await replay.to(None)
            assert len(replay.pool_sizes) == 2 and sum(replay.pool_sizes) == len(await _ends(settings))
            await replay.close()
            assert replay.applied == applied
            assert await compare(conn, "live", scratch.schema) == []
            seasons = await conn.fetchval(f'SELECT count(*) FROM "{scratch.schema}".seasons')
            assert seasons >= 1
        finally:
            await replay.close()
            await drop_schema(conn, scratch.schema)
    finally:
        await conn.close()


async def test_a_parallel_rebuild_swaps_in_and_verify_with_workers_finds_it_identical(settings, topics):
    await ev.publish(settings, varied_log())
    async with projector(settings) as live:
        await run_to_end(live)
    before = seq_runs(await wire_deltas(settings))
    conn, lock_conn, snap = [await connect(settings.database_url) for _ in range(3)]
    try:
        result = await rebuild(parallel(settings), "live", conn, lock_conn)
        assert result.generation == 1 and result.records > 500
        check = await verify(parallel(settings), "live", conn, lock_conn, snap)
        assert check.identical, check.differences
        assert check.records == result.records
        seqs = {r["topic"]: r["last_seq"] for r in await conn.fetch("SELECT * FROM live.topic_seq")}
    finally:
        for c in (conn, lock_conn, snap):
            await c.close()
    assert seqs == {t: r[-1] for t, r in before.items()}  # the same seqs as the live run


async def test_a_worker_that_dies_fails_the_replay_and_no_worker_is_left(settings, topics):
    await ev.publish(settings, varied_log())
    conn = await connect(settings.database_url)
    try:
        scratch = await open_scratch(conn, settings, "live", publish=False)
        replay = ScratchReplay(scratch, conn, parallel(settings))
        try:
            targets = {tp: 1 for tp in await _ends(settings)}  # a first short round starts the pool
            await replay.to(targets)
            assert replay.pool is not None
            pids = [w.proc.pid for w in replay.pool._workers]
            os.kill(pids[0], signal.SIGKILL)
            with pytest.raises(RuntimeError, match="worker"):
                await replay.to(None)
            await replay.close()
            for pid in pids:
                assert not _alive(pid)
        finally:
            await replay.close()
            await drop_schema(conn, scratch.schema)
    finally:
        await conn.close()


async def _ends(settings):
    from projections.log_ends import log_end_offsets
    from schemas.datasets import FEED_TOPICS, topic_name

    return await log_end_offsets(settings, [topic_name("live", b, settings.topic_namespace) for b in FEED_TOPICS])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not yet reaped by asyncio's child watcher) is not running either
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split()[2] != "Z"
