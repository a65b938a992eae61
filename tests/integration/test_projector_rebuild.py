"""Rebuild and verify on a real broker and database, and the log epoch: a rebuilt schema equals
the live one row for row (seqs included), a swap while the live projector runs loses no batch,
verify finds a tampered row, and read models of another log are rebuilt, never continued."""

from __future__ import annotations

import asyncio

import msgspec

from infra.db import connect
from infra.log_epoch import ensure_epoch
from infra.topics import ensure_topics
from projections.log_ends import log_end_offsets
from projections.rebuild import drop_schema, open_scratch, rebuild, stale_reason, verify
from projections.runner import Projector
from tests.support import projection_events as ev
from tests.support.projection_harness import projector, run_to_end, seq_runs, wire_deltas

G = ev.game()
GID = G.game_id


def log_part(start_minute: int, n: int):
    out = []
    for i in range(n):
        m = start_minute + i
        out.append(ev.quote(GID, f"b{i % 4}", [-110 - i % 9, -105 + i % 7], market_type="totals",
                            point=["47.5", "48"][i % 2], minute=m))
        if i % 5 == 0:
            out.append(ev.state(GID, "live", minute=m, home=i, away=i // 2))
    return out


async def run_verify(settings):
    conn, lock_conn, snap = [await connect(settings.database_url) for _ in range(3)]
    try:
        return await verify(settings, "live", conn, lock_conn, snap)
    finally:
        for c in (conn, lock_conn, snap):
            await c.close()


async def run_rebuild(settings, **kw):
    conn, lock_conn = await connect(settings.database_url), await connect(settings.database_url)
    try:
        return await rebuild(settings, "live", conn, lock_conn, **kw)
    finally:
        await conn.close()
        await lock_conn.close()


async def _assert_seqs_kept(settings) -> None:
    """Every topic's deltas on wire.deltas run 1..n, and live.topic_seq holds each topic's n:
    the rebuilds kept every topic's seq."""
    runs = seq_runs(await wire_deltas(settings))
    assert all(r == list(range(1, len(r) + 1)) for r in runs.values())
    conn = await connect(settings.database_url)
    try:
        seqs = {r["topic"]: r["last_seq"] for r in await conn.fetch("SELECT * FROM live.topic_seq")}
    finally:
        await conn.close()
    assert seqs == {t: r[-1] for t, r in runs.items()}


async def test_rebuild_swaps_in_identical_tables_and_the_live_projector_follows(settings, topics):
    await ev.publish(settings, [ev.team("KC"), G, *log_part(0, 40)])
    async with projector(settings) as live:
        await run_to_end(live)
        result = await run_verify(settings)
        assert result.identical, result.differences
        assert result.records == 40 + 8 + 2

        swapped = await run_rebuild(settings)
        assert swapped.generation == 1 and not swapped.epoch_changed
        assert (await run_verify(settings)).identical

        # the live projector still holds state of generation 0: its next batch must notice,
        # reload from the swapped-in schema, and carry on without losing or repeating anything
        await ev.publish(settings, log_part(100, 20))
        assert await run_to_end(live) == 24
        assert live.stats.reloads == 1 and live.generation == 1
    assert (await run_verify(settings)).identical
    await _assert_seqs_kept(settings)


async def test_verify_reports_a_tampered_row(settings, topics):
    await ev.publish(settings, [G, *log_part(0, 10)])
    async with projector(settings) as live:
        await run_to_end(live)
    conn = await connect(settings.database_url)
    try:
        await conn.execute("UPDATE live.market_lines SET hold = hold + 0.01 WHERE is_main")
        await conn.execute("UPDATE live.topic_seq SET last_seq = last_seq + 1 WHERE topic LIKE 'game:%'")
    finally:
        await conn.close()
    result = await run_verify(settings)
    assert not result.identical
    tables = {line.split(":")[0] for line in result.differences}
    assert tables == {"market_lines", "topic_seq"}


async def test_read_models_of_another_log_are_rebuilt_not_continued(settings, topics):
    # project a log, then point the same database at a new log (a fresh namespace stands in for a
    # restarted embedded broker: new topics, new epoch) that holds fewer records
    await ev.publish(settings, [G, *log_part(0, 30)])
    async with projector(settings) as live:
        await run_to_end(live)
    old_epoch = live.epoch
    fresh = msgspec.structs.replace(settings, topic_namespace=settings.topic_namespace + "new.")
    await ensure_topics(fresh)
    await ev.publish(fresh, [G, *log_part(0, 5)])
    epoch = await ensure_epoch(fresh, "live")
    assert epoch != old_epoch
    conn = await connect(settings.database_url)
    try:
        ends = await log_end_offsets(fresh, live.topics)
        assert "epoch changed" in await stale_reason(conn, "live", epoch, ends)
    finally:
        await conn.close()

    runner = Projector(fresh, datasets=("live",))
    await runner.prepare()  # finds the stale read models and rebuilds them from the new log
    try:
        lane = runner.lanes["live"]
        assert lane.projector.epoch == epoch and lane.projector.generation == 1
        assert await lane.relay.drain(20)
    finally:
        await runner.shutdown()
    conn = await connect(settings.database_url)
    try:
        game = await conn.fetchrow("SELECT status, score_home, last_seq FROM live.games")
        assert (game["status"], game["score_home"], game["last_seq"]) == ("live", 0, 2)
        tracked = {r["epoch"] for r in await conn.fetch("SELECT epoch FROM live.tracking")}
        assert tracked == {epoch}
    finally:
        await conn.close()
    # the new log's deltas went out on the new log's wire.deltas, seqs from 1
    runs = seq_runs(await wire_deltas(fresh))
    assert runs[f"game:{GID}"] == [1, 2]


async def test_tracked_offsets_beyond_the_log_end_mean_stale(settings, topics):
    await ev.publish(settings, [G, *log_part(0, 3)])
    async with projector(settings) as live:
        await run_to_end(live)
    conn = await connect(settings.database_url)
    try:
        epoch = await ensure_epoch(settings, "live")
        ends = await log_end_offsets(settings, live.topics)
        assert await stale_reason(conn, "live", epoch, ends) is None
        await conn.execute("UPDATE live.tracking SET last_offset = last_offset + 100")
        assert "beyond the log's end" in await stale_reason(conn, "live", epoch, ends)
    finally:
        await conn.close()


async def test_rebuild_under_a_running_projector_loses_nothing(settings, topics, tmp_path):
    """Swap a rebuilt schema in while `svc projector run` keeps projecting a growing log: no
    batch lost or repeated, seqs continue, deltas run 1..n with only exact duplicates."""
    import asyncio
    import signal

    from tests.support.projection_harness import caught_up, start_projector

    games = ev.schedule(6)
    books = ("dk", "fd", "mgm")
    await ev.publish(settings, [*games, *ev.season_quotes(games, books, 40, seed=1)])
    log = tmp_path / "projector.log"
    proc = start_projector(settings, log)
    stop = asyncio.Event()

    async def keep_appending():
        i = 0
        while not stop.is_set():
            i += 1
            await ev.publish(settings, ev.season_quotes(games, books, 1, seed=100 + i, first_minute=100 + i,
                                                        tag=f"a{i}"))
            await asyncio.sleep(0.05)

    appender = asyncio.create_task(keep_appending())
    try:
        # the first swap must meet a running projector: on a busy machine start-up takes a while
        for _ in range(300):
            if "projector running" in log.read_text():
                break
            await asyncio.sleep(0.2)
        assert "projector running" in log.read_text(), log.read_text()[-2000:]
        await asyncio.sleep(1)
        results = [await run_rebuild(settings)]  # while the projector's fast path follows the log
        for _ in range(150):
            if "resuming at the tracked offsets" in log.read_text():
                break
            await asyncio.sleep(0.2)
        await asyncio.sleep(1)
        results.append(await run_rebuild(settings))  # while the faust agents carry the live path
        await asyncio.sleep(1)
        stop.set()
        await appender
        assert await caught_up(settings, 60), log.read_text()[-2000:]
    finally:
        stop.set()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(30)
    assert code == 0, log.read_text()[-2000:]
    assert [r.generation for r in results] == [1, 2] and not any(r.epoch_changed for r in results)
    assert log.read_text().count("reloading state") >= 2  # the live projector met both swaps
    assert (await run_verify(settings)).identical
    await _assert_seqs_kept(settings)


async def _scratch_schemas(conn) -> set[str]:
    return {r["nspname"] for r in await conn.fetch(r"SELECT nspname FROM pg_namespace WHERE nspname LIKE 'live\_build\_%'")}


async def test_a_scratch_schema_whose_builder_died_is_dropped_by_the_next_build(settings, topics):
    await ev.publish(settings, [ev.team("KC"), G, *log_part(0, 5)])
    dead, alive, later = [await connect(settings.database_url) for _ in range(3)]
    try:
        abandoned = await open_scratch(dead, settings, "live", publish=False)
        running = await open_scratch(alive, settings, "live", publish=False)
        pid = dead.get_server_pid()
        await dead.close()  # as a killed rebuild: its session, and with it the schema's key, ends
        for _ in range(200):
            if not await later.fetchval("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", pid):
                break
            await asyncio.sleep(0.025)
        assert {abandoned.schema, running.schema} <= await _scratch_schemas(later)

        fresh = await open_scratch(later, settings, "live", publish=False)
        # the dead builder's schema is gone; the running builder's and the new one are not
        assert await _scratch_schemas(later) == {running.schema, fresh.schema}
        await drop_schema(later, fresh.schema)
        await drop_schema(alive, running.schema)
        assert await _scratch_schemas(later) == set()
        assert not await alive.fetchval("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = $1",
                                        alive.get_server_pid())
    finally:
        for c in (alive, later):
            await c.close()
