"""Resume from the retained log (wire/log_replay.py) on the real broker: several topics in one
pass, each topic's deltas found in its partition, complete runs only, duplicates counted once,
and nothing older than the window."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone

import msgspec
import pytest

from infra.kafka import make_consumer, make_producer
from infra.topics import ensure_topics
from schemas.datasets import WIRE_DELTAS, topic_name
from wire import log_replay
from wire.fanout import DeltaFanout, delta_of


def envelope(topic: str, seq: int) -> bytes:
    now = datetime.now(timezone.utc)
    return msgspec.json.encode({"op": "delta", "type": "game.state", "topic": topic, "seq": seq, "source_ts": now,
                                "emit_ts": now, "source": "test", "data": {"status": "live"}})


def seqs_of(found: dict) -> dict:
    return {topic: None if deltas is None else [d.seq for d in deltas] for topic, deltas in found.items()}


@pytest.mark.parametrize("partitions", [1, 3])
async def test_missed_deltas_come_from_the_log_for_many_topics_at_once(settings, partitions):
    # one partition is the default; with several, each topic's deltas are found in its own
    settings = msgspec.structs.replace(settings, delta_partitions=partitions)
    await ensure_topics(settings)
    log_topic = topic_name("live", WIRE_DELTAS, settings.topic_namespace)
    names = [f"game:gm_{i:020d}" for i in range(6)]
    producer = make_producer(settings)
    await producer.start()
    try:
        sends = []
        for seq in range(1, 6):
            for name in names[:5]:
                sends.append(await producer.send(log_topic, envelope(name, seq), key=name.encode()))
        sends.append(await producer.send(log_topic, envelope(names[0], 3), key=names[0].encode()))  # a duplicate
        sends.append(await producer.send(log_topic, envelope(names[4], 7), key=names[4].encode()))  # after a gap
        await asyncio.gather(*sends)
    finally:
        await producer.stop()

    fanout = DeltaFanout(settings)  # started after the deltas: its memory holds none of them
    try:
        asked = {names[0]: 2, names[1]: 5, names[2]: 0, names[3]: 9, names[4]: 3, names[5]: 1}
        missed = await fanout.missed("live", asked)
        assert seqs_of(missed) == {
            names[0]: [3, 4, 5],  # the duplicate of 3 counted once
            names[1]: [],  # current: its last seq is on the log
            names[2]: [1, 2, 3, 4, 5],
            names[3]: None,  # a seq the topic never reached: a snapshot
            names[4]: None,  # 6 is missing before 7: a snapshot
            names[5]: None,  # nothing on the log
        }
        assert missed[names[0]][0].type == "game.state" and missed[names[0]][0].status == "live"
        # a window that ends before the deltas were appended: the log cannot vouch for anything
        old = await fanout.log.since(log_topic, {names[1]: 5}, seconds=-60)
        assert old == {names[1]: None}

        # resumes arriving together share scans, and each gets what it would have got alone
        apart = [{names[0]: 2}, {names[0]: 4, names[2]: 0}, {names[1]: 5}, {names[4]: 3}, {names[3]: 9, names[0]: 0}]
        alone = [seqs_of(await fanout.log.since(log_topic, asked)) for asked in apart]
        scan, scans = fanout.log._scan, []

        async def counting(*args):
            scans.append(args)
            return await scan(*args)

        fanout.log._scan = counting
        together = await asyncio.gather(*(fanout.log.since(log_topic, asked) for asked in apart))
        assert [seqs_of(found) for found in together] == alone
        assert alone[1] == {names[0]: [5], names[2]: [1, 2, 3, 4, 5]}
        assert len(scans) <= 2  # the first alone, the four that waited behind it in one
    finally:
        await fanout.aclose()


async def test_a_cancelled_scan_leaves_no_consumer_open(settings, monkeypatch):
    # a resume's wait_for gives up while its scan is starting its consumer or reading: every
    # consumer the scans created is stopped (aiokafka logs "Unclosed AIOKafkaConsumer" otherwise)
    await ensure_topics(settings)
    log_topic = topic_name("live", WIRE_DELTAS, settings.topic_namespace)
    made, creating = [], asyncio.Event()

    def recording(*args, **kwargs):
        consumer = make_consumer(*args, **kwargs)
        made.append(consumer)
        creating.set()
        return consumer

    monkeypatch.setattr(log_replay, "make_consumer", recording)
    replay = log_replay.LogReplay(settings, delta_of)
    try:
        # cancelled while the consumer starts (it connects to the broker: many loop turns)
        scan = asyncio.create_task(replay.since(log_topic, {"game:gm_1": 0}))
        behind = asyncio.create_task(replay.since(log_topic, {"game:gm_2": 0}))  # waits for its turn
        await creating.wait()
        scan.cancel()
        with pytest.raises(asyncio.CancelledError):
            await scan
        # the resume waiting behind the cancelled one is still answered, by a scan of its own
        assert made[0]._closed is True
        assert await asyncio.wait_for(behind, 30) == {"game:gm_2": None}
        # cancelled at other points, then one that completes
        for delay in (0.001, 0.01, 0.05, 0.2):
            try:
                await asyncio.wait_for(replay.since(log_topic, {"game:gm_1": 0}), delay)
            except asyncio.TimeoutError:
                pass  # where it is cancelled depends on the machine's speed; none may leak
        assert await replay.since(log_topic, {"game:gm_1": 0}) == {"game:gm_1": None}
        # a scan serving two waiting resumes is cancelled by one's caller: the other is still answered
        scan, batched = replay._scan, asyncio.Event()

        async def watching(consumer, log_topic, topics, seconds):
            if len(topics) == 2:
                batched.set()
            return await scan(consumer, log_topic, topics, seconds)

        replay._scan = watching
        first = asyncio.create_task(replay.since(log_topic, {"game:gm_1": 0}))
        taking = asyncio.create_task(replay.since(log_topic, {"game:gm_2": 0}))
        other = asyncio.create_task(replay.since(log_topic, {"game:gm_3": 0}))
        await first
        await asyncio.wait_for(batched.wait(), 30)
        taking.cancel()
        with pytest.raises(asyncio.CancelledError):
            await taking
        assert await asyncio.wait_for(other, 30) == {"game:gm_3": None}
    finally:
        await replay.aclose()
    assert len(made) >= 2 and all(c._closed is True for c in made)
