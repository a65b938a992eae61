"""After the projector hands the live path back to the bulk path and faust is moved past what
it had read (projections/runner.py `_bulk_until_head`), faust's own bookkeeping follows: it
commits each feed partition again as its agent takes the records (issue 26: it committed none
after the first such hand-back, and kept every offset acknowledged since, without bound).
Real broker and Postgres; the projector as its own process."""

from __future__ import annotations

import asyncio
import signal
import time

from aiokafka import AIOKafkaConsumer

from infra.db import connect
from projections.lag import group_name
from schemas.datasets import FEED_TOPICS, topic_name
from tests.support import projection_events as ev
from tests.support.projection_harness import TopicPartition, caught_up, start_projector

FAR_BEHIND = 1_000
GAMES = 12
BOOKS = [f"book{i}" for i in range(4)]
ROUNDS = 60  # 8,640 quotes a burst: faust has read only part of it when the bulk path takes over


async def _log_count(log, text: str, n: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.read_text().count(text) >= n:
            return True
        await asyncio.sleep(0.1)
    return False


async def _group_committed_to_ends(settings, timeout: float) -> dict:
    """The live group's committed offsets of every feed partition once they reach the log ends
    (else as last read, after `timeout`)."""
    tps = [TopicPartition(topic_name("live", t, settings.topic_namespace), p)
           for t in FEED_TOPICS for p in range(settings.topic_partitions)]
    reader = AIOKafkaConsumer(bootstrap_servers=settings.kafka_bootstrap, group_id=group_name(settings),
                              enable_auto_commit=False)
    await reader.start()
    try:
        ends = await reader.end_offsets(tps)
        deadline = time.monotonic() + timeout
        while True:
            committed = {tp: await reader.committed(tp) or 0 for tp in tps}
            lagging = {tp: (c, ends[tp]) for tp, c in committed.items()
                       if c < ends[tp]}
            if not lagging or time.monotonic() > deadline:
                return lagging
            await asyncio.sleep(0.2)
    finally:
        await reader.stop()


async def test_faust_commits_every_feed_partition_again_after_a_hand_back(settings, topics, tmp_path):
    games = ev.schedule(GAMES)
    await ev.publish(settings, games)
    log = tmp_path / "projector.log"
    proc = start_projector(settings, log, SVC_LIVE_FAR_BEHIND=str(FAR_BEHIND))
    hold = await connect(settings.database_url)
    try:
        assert await caught_up(settings, 60), log.read_text()[-3000:]
        assert await _log_count(log, "resuming at the tracked offsets", 1, 30), log.read_text()[-3000:]
        # the live path held back (no batch commits while the tracking table is locked) under a
        # burst it reads only part of before the hand-back pauses it
        tx = hold.transaction()
        await tx.start()
        await hold.execute("LOCK TABLE live.tracking IN EXCLUSIVE MODE")
        try:
            await ev.publish(settings, ev.season_quotes(games, BOOKS, ROUNDS, seed=3, first_minute=1, tag="burst"))
            assert await _log_count(log, "handing it to the bulk path", 1, 30), log.read_text()[-3000:]
        finally:
            await tx.rollback()
        assert await _log_count(log, "back to the live path at the head", 1, 60), log.read_text()[-3000:]
        # every feed topic gets a record on each partition after the hand-back, for the live path
        players = [ev.player(f"p{i}", f"Player {i}") for i in range(8)]
        teams = [ev.team(f"T{i}", f"Team {i}") for i in range(8)]
        await ev.publish(settings, [*players, *teams,
                                    *(ev.state(g.game_id, "live", minute=500, home=7) for g in games)])
        assert await caught_up(settings, 30), log.read_text()[-3000:]
        lagging = await _group_committed_to_ends(settings, 10)
        assert not lagging, (lagging, log.read_text()[-3000:])
    finally:
        await hold.close()
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(proc.wait, 30)
    assert code == 0, log.read_text()[-3000:]
