"""`svc projector run` as its own process on a real broker and database: it catches up with the
fast path, hands over to the faust agents, projects what arrives later with deltas on
wire.deltas, and stops cleanly on SIGTERM."""

from __future__ import annotations

import signal

from infra.db import connect
from tests.support import projection_events as ev
from tests.support.projection_harness import caught_up, seq_runs, start_projector, verified, wire_deltas

G = ev.game()
GID = G.game_id


async def test_projector_process_catches_up_then_follows_the_log_with_faust(settings, topics, tmp_path):
    await ev.publish(settings, [ev.team("KC"), G, *[ev.quote(GID, f"b{i}", [-110 - i, 100 + i], minute=i)
                                                      for i in range(20)]])
    await ev.publish(settings, [ev.game(home="NYJ", away="NE")], dataset="test")
    proc = start_projector(settings, tmp_path / "projector.log")
    try:
        assert await caught_up(settings, 60), (tmp_path / "projector.log").read_text()[-3000:]
        # after the hand-over the agents carry the live path
        log_text = ""
        for _ in range(100):
            log_text = (tmp_path / "projector.log").read_text()
            if "resuming at the tracked offsets" in log_text:
                break
            import asyncio
            await asyncio.sleep(0.2)
        assert "resuming at the tracked offsets" in log_text
        await ev.publish(settings, [ev.state(GID, "live", minute=30, home=3, away=0),
                                    ev.quote(GID, "b0", [-200, 170], minute=31)])
        assert await caught_up(settings, 30)
        conn = await connect(settings.database_url)
        try:
            game = await conn.fetchrow("SELECT status, score_home, last_seq FROM live.games WHERE id = $1", GID)
            assert (game["status"], game["score_home"], game["last_seq"]) == ("live", 3, 2)
            assert await conn.fetchval("SELECT count(*) FROM test.games") == 1
        finally:
            await conn.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(30)
    assert code == 0, (tmp_path / "projector.log").read_text()[-3000:]
    runs = seq_runs(await wire_deltas(settings))
    assert runs[f"game:{GID}"] == [1, 2]
    (market,) = [r for t, r in runs.items() if t.startswith("market:")]
    assert market == list(range(1, len(market) + 1)) and len(market) == 21  # a new book each time, then b0 again
    assert seq_runs(await wire_deltas(settings, "test"))  # the sandbox has its own deltas topic


async def test_a_log_that_changes_under_the_running_projector_makes_it_exit_and_rebuild(settings, topics, tmp_path):
    import asyncio

    await ev.publish(settings, [G, *[ev.quote(GID, f"b{i}", [-110 - i, 100 + i], minute=i) for i in range(5)]])
    log = tmp_path / "projector.log"
    proc = start_projector(settings, log)
    try:
        assert await caught_up(settings, 60)
        # tracked offsets beyond the log's end: what recreated topics look like
        conn = await connect(settings.database_url)
        try:
            await conn.execute("UPDATE live.tracking SET last_offset = last_offset + 1000")
        finally:
            await conn.close()
        code = await asyncio.to_thread(proc.wait, 30)
        assert code == 3, log.read_text()[-2000:]  # the watchdog's "log changed" exit
    finally:
        if proc.poll() is None:
            proc.kill()
    proc = start_projector(settings, log)  # as the supervisor would
    try:
        assert await caught_up(settings, 60), log.read_text()[-2000:]
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    assert "rebuilding from offset 0" in log.read_text()
    result = await verified(settings)
    assert result.identical, result.differences


async def test_a_log_that_cannot_be_read_is_no_changed_log_the_projector_gives_up_without_a_rebuild(
        settings, tmp_path):
    """A broker that stops answering (frozen here; overloaded or out of reach alike) leaves the
    log unread, not changed: the projector exits as one that cannot make progress (1), not with
    the rebuild code (3), and restarted once the broker answers it resumes with no rebuild."""
    import asyncio
    import os

    import msgspec

    from infra.broker import start_broker
    from infra.topics import ensure_topics
    from projections.runner import EXIT_LOG_CHANGED

    # a broker of this test's own, to freeze without touching the other tests' one
    broker, port = start_broker(log_path=tmp_path / "tansu.log")
    own = msgspec.structs.replace(settings, kafka_bootstrap=f"127.0.0.1:{port}")
    log = tmp_path / "projector.log"
    try:
        await ensure_topics(own)
        await ev.publish(own, [G, *[ev.quote(GID, f"b{i}", [-110 - i, 100 + i], minute=i) for i in range(5)]])
        # short limits: the give-up comes sooner than faust's own timeouts at the frozen broker
        # (4 s: at the second failed check, WATCH_EVERY after the first), and faust's stop, which
        # never ends at a frozen broker, is waited for 3 s of a 5 s stop, not 15 of 25
        proc = start_projector(own, log, SVC_STALL_AFTER_SECONDS="4", SVC_PROJECTOR_STOP_SECONDS="5")
        try:
            assert await caught_up(own, 60), log.read_text()[-3000:]
            os.kill(broker.pid, signal.SIGSTOP)
            try:
                code = await asyncio.to_thread(proc.wait, 120)
            finally:
                os.kill(broker.pid, signal.SIGCONT)
            text = log.read_text()
            assert code != EXIT_LOG_CHANGED and "exiting to rebuild" not in text, text[-3000:]
            assert code == 1 and "the log could not be read" in text, text[-3000:]
            # each check given up on closed its client (they were left open, one per check)
            assert "Unclosed AIOKafkaConsumer" not in text, text[-3000:]
        finally:
            if proc.poll() is None:
                proc.kill()
        # as the supervisor restarts it: the same log, so it resumes where it was
        proc = start_projector(own, log)
        try:
            for _ in range(300):  # up (its SIGTERM handler set), not merely caught up already
                if log.read_text().count("projector running") == 2:
                    break
                await asyncio.sleep(0.2)
            assert log.read_text().count("projector running") == 2, log.read_text()[-3000:]
            assert await caught_up(own, 60), log.read_text()[-3000:]
        finally:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(30) == 0
        assert "rebuilding from offset 0" not in log.read_text()
    finally:
        broker.terminate()
        broker.wait(10)
