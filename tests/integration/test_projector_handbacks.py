"""Issue 26's sustained run, where faust stopped delivering from feed.games: after a hand-back to
the bulk path moved faust past what it had read, faust commits each feed partition again (it
committed none after the first such hand-back, and kept every offset acknowledged since); and
the live path keeps reading a partition of many record batches, which the embedded broker
answers with no records while the fetch wait is shorter than its listing of the batches.
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
from tests.support.projection_harness import TopicPartition, burst_through_a_hand_back, caught_up, log_shows, start_projector

FAR_BEHIND = 1_000
GAMES = 12
BOOKS = [f"book{i}" for i in range(4)]
ROUNDS = 60  # 8,640 quotes a burst: faust has read only part of it when the bulk path takes over


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
        assert await log_shows(log, "resuming at the tracked offsets", 30), log.read_text()[-3000:]
        # a burst the live path reads only part of before the hand-back pauses it
        await burst_through_a_hand_back(
            settings, log, hold, ev.season_quotes(games, BOOKS, ROUNDS, seed=3, first_minute=1, tag="burst"))
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


BATCHES = 6_000  # one-record batches per feed.games partition: past what a 1 ms fetch wait can read


async def _publish_one_record_batches(settings, events, producers: int = 4) -> None:
    """Append events as one record batch each (the embedded broker's cost is per batch), on the
    partition their key maps to, as a keyed send would; a key's events in order, through one of
    `producers` producers (the broker takes one batch per partition and request: several
    producers append faster)."""
    from aiokafka import AIOKafkaProducer
    from aiokafka.partitioner import DefaultPartitioner

    from schemas.events import encode, event_key, event_topic

    partitions = list(range(settings.topic_partitions))
    choose = DefaultPartitioner()
    shares: list[list] = [[] for _ in range(producers)]
    for e in events:
        key = event_key(e).encode()
        shares[hash(key) % producers].append(
            (topic_name("live", event_topic(e), settings.topic_namespace), key, encode(e),
             choose(key, partitions, partitions)))

    async def send(share) -> None:
        producer = AIOKafkaProducer(bootstrap_servers=settings.kafka_bootstrap)
        await producer.start()
        try:
            pending = []
            for topic, key, value, partition in share:
                batch = producer.create_batch()
                batch.append(key=key, value=value, timestamp=None)
                batch.close()
                pending.append(await producer.send_batch(batch, topic, partition=partition))
            await asyncio.gather(*pending)
        finally:
            await producer.stop()

    await asyncio.gather(*(send(share) for share in shares))


async def test_the_live_path_widens_its_fetch_wait_until_a_long_partition_answers(settings, topics, tmp_path):
    """The embedded broker answers a fetch whose wait runs out while it lists a partition's
    batches with no records from it: the live path started with a 1 ms wait on partitions of
    6,000 batches (a 1 ms wait read nothing from 4,000 here; 10 ms, the default, nothing from
    20,000) and must still carry them and what is appended next, by itself (no hand-back).
    Without the widening (runner.LIVE_FETCH_WAIT_MAX_MS at 1) this failed here: the log was not
    applied within 60 s; with it the wait went 1 -> 2 -> 4 -> 8 ms. How many batches a wait can
    read depends on the machine's speed."""
    games = ev.schedule(GAMES)
    await ev.publish(settings, games)
    quotes = ev.season_quotes(games, BOOKS, -(-2 * BATCHES // (GAMES * len(BOOKS) * 3)), seed=5, tag="long")
    log = tmp_path / "projector.log"
    # started first, so that it starts while the partitions grow; the live path carries them
    # whatever it falls behind (no hand-back to hide a live path fed nothing)
    proc = start_projector(settings, log, SVC_LIVE_FETCH_WAIT_MS="1", SVC_LIVE_FAR_BEHIND="1000000")
    try:
        await _publish_one_record_batches(settings, quotes)
        assert await caught_up(settings, 60), log.read_text()[-3000:]
        assert await log_shows(log, "resuming at the tracked offsets", 30), log.read_text()[-3000:]
        players = [ev.player(f"p{i}", f"Player {i}") for i in range(8)]
        teams = [ev.team(f"T{i}", f"Team {i}") for i in range(8)]
        await ev.publish(settings, [*players, *teams,
                                    *(ev.state(g.game_id, "live", minute=500, home=7) for g in games)])
        assert await caught_up(settings, 15), log.read_text()[-3000:]
        text = log.read_text()
        assert "handing it to the bulk path" not in text, text[-3000:]
    finally:
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(proc.wait, 30)
    assert code == 0, log.read_text()[-3000:]
