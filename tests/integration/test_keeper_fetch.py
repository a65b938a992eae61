"""Fetch served by the log keeper from its copy (infra/log_keeper.py, docs/log.md), on a real tansu.

The keeper answers Fetch v11 (what aiokafka sends) itself: the records must be exactly what the
broker behind it answers to the same request, at every offset; a fetch at the end waits for a
produce or for max_wait; responses keep the order of the requests on a connection.
"""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.protocol.fetch import FetchRequest_v11
from aiokafka.protocol.metadata import MetadataRequest_v1
from aiokafka.record.memory_records import MemoryRecords

from infra import kafka_protocol as kp
from infra.net import free_port, wait_port

TOPICS = {"fa": 3, "fb": 2}


class Keeper:
    """The keeper as `svc up` runs it; `broker` is tansu's private port, read from its log."""

    def __init__(self, data_dir: Path) -> None:
        self.port = free_port()
        self.log = data_dir / "keeper.log"
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "infra.log_keeper", "--data-dir", str(data_dir),
                                          "--port", str(self.port)], stderr=out)
        wait_port("127.0.0.1", self.port, 30, lambda: self.proc.poll() is None)
        deadline = time.monotonic() + 10
        while not (found := re.search(r"\(broker on (\d+)\)", self.log.read_text())):
            assert time.monotonic() < deadline, self.log.read_text()
            time.sleep(0.02)
        self.broker = int(found.group(1))

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(30) == 0, self.log.read_text()


@pytest.fixture
def keeper(tmp_path):
    k = Keeper(tmp_path)
    yield k
    k.stop()


async def _topics(address: str, topics: dict[str, int]) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=address)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(t, n, 1) for t, n in topics.items()])
    finally:
        await admin.close()


async def _log(address: str) -> dict[tuple[str, int], int]:
    """Several topics and partitions, batches of one record, of hundreds, and of one record
    bigger than the max_bytes fetched below; keys, no keys, headers, timestamps."""
    await _topics(address, TOPICS)
    producer = AIOKafkaProducer(bootstrap_servers=address, acks="all", linger_ms=5, max_batch_size=64 << 10,
                                max_request_size=4 << 20)
    await producer.start()
    ends: dict[tuple[str, int], int] = {}
    try:
        n = 0
        for round_ in range(3):
            for topic, partitions in TOPICS.items():
                for p in range(partitions):
                    for i in range(3):  # one record a batch
                        await producer.send_and_wait(topic, f"one{n}".encode(), key=f"k{n}".encode(), partition=p,
                                                     headers=[("h", str(n).encode())], timestamp_ms=1_700_000_000_000 + n)
                        n += 1
                    futures = []
                    for i in range(300 + 50 * p):  # gathered: a few batches of many records
                        futures.append(await producer.send(topic, f"many{n}".encode() * 3, partition=p,
                                                           key=None if i % 7 == 0 else f"k{n % 13}".encode(),
                                                           headers=[("a", b"1"), ("b", str(i).encode())] if i % 2 else [],
                                                           timestamp_ms=1_700_000_000_000 + n))
                        n += 1
                    await asyncio.gather(*futures)
                    # one record bigger than the partition max_bytes fetched below (KIP-74)
                    await producer.send_and_wait(topic, bytes(range(256)) * 800 + bytes([round_]), partition=p,
                                                 key=b"big", timestamp_ms=1_700_000_000_000 + n)
                    n += 1
        for topic, partitions in TOPICS.items():
            for p in range(partitions):
                ends[(topic, p)] = (await producer.send_and_wait(topic, b"last", partition=p)).offset + 1
    finally:
        await producer.stop()
    return ends


def _fetch(parts: list[tuple[str, int, int, int]], max_bytes: int = 50 << 20, max_wait_ms: int = 100,
           min_bytes: int = 1) -> FetchRequest_v11:
    """parts: (topic, partition, offset, partition max bytes); built as aiokafka builds it."""
    topics: dict[str, list] = {}
    for topic, p, offset, part_max in parts:
        topics.setdefault(topic, []).append((p, -1, offset, -1, part_max))
    return FetchRequest_v11(-1, max_wait_ms, min_bytes, max_bytes, 0, 0, -1, list(topics.items()), [], "")


def _answers(response) -> dict[tuple[str, int], tuple]:
    """(topic, partition) -> (error, high watermark, [(offset, timestamp, key, value, headers)])."""
    out = {}
    for topic, partitions in response.topics:
        for p, error, hw, _lso, _start, aborted, _replica, data in partitions:
            assert aborted in ([], None)
            records = []
            batches = MemoryRecords(data or b"")
            while (batch := batches.next_batch()) is not None:
                assert batch.validate_crc()
                records += [(r.offset, r.timestamp, r.key, r.value, tuple(r.headers)) for r in batch]
            out[(topic, p)] = (error, hw, records)
    return out


def _batches(response) -> dict[tuple[str, int], list[int]]:
    """(topic, partition) -> bytes of each record batch answered."""
    out = {}
    for topic, partitions in response.topics:
        for p, *_, data in partitions:
            sizes = []
            for start, end, _ in kp.batch_spans(data or b""):
                sizes.append(end - start)
            out[(topic, p)] = sizes
    return out


async def test_fetch_answers_what_the_broker_answers_at_every_offset(keeper):
    """tansu ignores a partition's max_bytes (it answers the whole partition): with a max_bytes
    that holds the partition the answers are equal; with less, ours is the start of tansu's,
    from the batch holding the offset, within max_bytes or one whole batch (KIP-74)."""
    ends = await _log(keeper.address)
    ours = await kp.Client.connect("127.0.0.1", keeper.port)
    theirs = await kp.Client.connect("127.0.0.1", keeper.broker)
    try:
        compared, bigger = 0, 0
        for (topic, p), end in ends.items():
            offsets = sorted({*range(0, 12), *range(0, end + 1, 37), end - 2, end - 1, end})
            for offset in offsets:
                for part_max in (1, 10_000, 1 << 20):
                    request = _fetch([(topic, p, offset, part_max)])
                    answer = await ours.request(request)
                    got, expected = _answers(answer), _answers(await theirs.request(request))
                    error, hw, records = got[(topic, p)]
                    assert (error, hw) == expected[(topic, p)][:2] == (0, end)
                    whole = expected[(topic, p)][2]
                    assert [r for r in whole if r[0] >= offset][-1:] == [r for r in whole if r[0] == end - 1][-1:]
                    if part_max == 1 << 20:  # holds the partition: the same answer
                        assert got == expected, (topic, p, offset)
                    else:
                        assert records == whole[:len(records)], (topic, p, offset, part_max)
                        sizes = _batches(answer)[(topic, p)]
                        assert sum(sizes) <= part_max or len(sizes) == 1, (topic, p, offset, part_max, sizes)
                        bigger += len(sizes) == 1 and sizes[0] > part_max
                    assert offset == end or records[0][0] <= offset <= records[-1][0], (topic, p, offset, part_max)
                    compared += 1
        # one request for every partition, with a request max_bytes
        for offset in (0, 5, 301, 700):
            request = _fetch([(t, p, min(offset, e), 1 << 20) for (t, p), e in ends.items()])
            assert _answers(await ours.request(request)) == _answers(await theirs.request(request)), offset
            limited = await ours.request(_fetch([(t, p, min(offset, e), 1 << 20) for (t, p), e in ends.items()],
                                                max_bytes=50_000))
            sizes = [s for batches in _batches(limited).values() for s in batches]
            assert sizes and (sum(sizes) <= 50_000 or len(sizes) == 1 or sum(sizes[:-1]) <= 50_000)
        assert compared > 500 and bigger > 10  # the big batches were answered whole, alone
    finally:
        await ours.close()
        await theirs.close()


async def _produce_one(address: str, topic: str, partition: int, value: bytes) -> int:
    producer = AIOKafkaProducer(bootstrap_servers=address, acks="all")
    await producer.start()
    try:
        return (await producer.send_and_wait(topic, value, partition=partition)).offset
    finally:
        await producer.stop()


async def test_a_fetch_at_the_end_waits_for_max_wait_or_for_a_produce(keeper):
    await _topics(keeper.address, {"w": 2})
    await _produce_one(keeper.address, "w", 0, b"first")
    client = await kp.Client.connect("127.0.0.1", keeper.port)
    try:
        # nothing comes: an empty answer, after max_wait (not before)
        started = time.monotonic()
        answer = _answers(await client.request(_fetch([("w", 0, 1, 1 << 20), ("w", 1, 0, 1 << 20)], max_wait_ms=400)))
        waited = time.monotonic() - started
        assert answer == {("w", 0): (0, 1, []), ("w", 1): (0, 0, [])}
        assert waited >= 0.35

        # a produce to one of the partitions answers it early, with the record
        fetch = asyncio.ensure_future(client.request(_fetch([("w", 0, 1, 1 << 20), ("w", 1, 0, 1 << 20)],
                                                            max_wait_ms=60_000), timeout=90))
        await asyncio.sleep(0.3)
        assert not fetch.done()
        started = time.monotonic()
        assert await _produce_one(keeper.address, "w", 1, b"second") == 0
        answer = _answers(await fetch)
        assert time.monotonic() - started < 30  # far below max_wait: woken by the produce
        assert answer[("w", 1)][:2] == (0, 1) and [r[3] for r in answer[("w", 1)][2]] == [b"second"]
        assert answer[("w", 0)] == (0, 1, [])

        # min_bytes: one small record is not enough, max_wait ends the wait with what there is
        answer = _answers(await client.request(_fetch([("w", 0, 0, 1 << 20)], max_wait_ms=300, min_bytes=1 << 20)))
        assert [r[3] for r in answer[("w", 0)][2]] == [b"first"]
    finally:
        await client.close()


async def test_responses_keep_the_order_of_requests_on_a_connection(keeper):
    """A fetch waiting for records holds back the answer to a request sent after it on the same
    connection (a Metadata request, answered by tansu at once): clients match by order."""
    await _topics(keeper.address, {"o": 1})
    reader, writer = await asyncio.open_connection("127.0.0.1", keeper.port)
    try:
        fetch = _fetch([("o", 0, 0, 1 << 20)], max_wait_ms=500)
        for corr, request in ((1, fetch), (2, MetadataRequest_v1(["o"])), (3, fetch)):
            header = request.build_request_header(correlation_id=corr, client_id="order")
            writer.write(kp.frame(header.encode() + request.encode()))
        await writer.drain()
        started = time.monotonic()
        answers, at = [], []
        for _ in range(3):
            answers.append(await asyncio.wait_for(kp.read_frame(reader), 30))
            at.append(time.monotonic() - started)
        assert [kp.correlation_id(a) for a in answers] == [1, 2, 3]
        assert at[1] >= 0.45  # tansu's answer waited for the fetch before it
    finally:
        writer.close()


async def test_out_of_range_and_unknown_partitions_are_errors(keeper):
    await _topics(keeper.address, {"e": 2, "empty": 1})
    await _produce_one(keeper.address, "e", 0, b"x")
    client = await kp.Client.connect("127.0.0.1", keeper.port)
    try:
        answer = _answers(await client.request(_fetch([("e", 0, 2, 1 << 20), ("e", 1, 0, 1 << 20), ("e", 2, 0, 1 << 20),
                                                       ("nope", 0, 0, 1 << 20), ("empty", 0, 0, 1 << 20)])))
        assert answer == {
            ("e", 0): (kp.OFFSET_OUT_OF_RANGE, 1, []),
            ("e", 1): (0, 0, []),  # a partition nothing was produced to
            ("e", 2): (kp.UNKNOWN_TOPIC_OR_PARTITION, -1, []),
            ("nope", 0): (kp.UNKNOWN_TOPIC_OR_PARTITION, -1, []),
            ("empty", 0): (0, 0, []),  # created, never produced to: known to the broker, not the copy
        }
    finally:
        await client.close()


async def test_a_consumer_reads_through_a_restart_and_follows_new_records(tmp_path):
    """aiokafka's consumer (what faust and the projector use) on the served fetch: every record
    back after a restart (from the restored copy), then records produced while it waits."""
    keeper = Keeper(tmp_path)
    try:
        ends = await _log(keeper.address)
    finally:
        keeper.stop()
    keeper = Keeper(tmp_path)
    consumer = AIOKafkaConsumer(bootstrap_servers=keeper.address, enable_auto_commit=False, fetch_max_wait_ms=10,
                                max_partition_fetch_bytes=10_000)
    try:
        await consumer.start()
        tps = [TopicPartition(t, p) for t, p in ends]
        consumer.assign(tps)
        for tp in tps:
            consumer.seek(tp, 0)
        seen: dict[tuple[str, int], list[int]] = {tp: [] for tp in ends}

        async def until(done) -> None:
            deadline = time.monotonic() + 60
            while not done():
                assert time.monotonic() < deadline, {tp: len(o) for tp, o in seen.items()}
                for tp, records in (await consumer.getmany(timeout_ms=200)).items():
                    seen[(tp.topic, tp.partition)] += [r.offset for r in records]

        await until(lambda: all(len(seen[tp]) >= end for tp, end in ends.items()))
        assert seen == {tp: list(range(end)) for tp, end in ends.items()}
        assert await _produce_one(keeper.address, "fb", 1, b"after") == ends[("fb", 1)]
        await until(lambda: len(seen[("fb", 1)]) > ends[("fb", 1)])
        assert seen[("fb", 1)][-1] == ends[("fb", 1)]
    finally:
        await consumer.stop()
        keeper.stop()


async def test_a_fetch_cancelled_while_the_keeper_looks_a_topic_up_leaves_its_broker_connection_in_step(keeper):
    """A fetch of topics created but never produced to makes the keeper ask tansu for their
    partitions on its own connection; a client gone mid-fetch cancels that fetch. The keeper's
    next question on that connection (a produce to a new topic) must get its own answer, not the
    abandoned one (seen: 'response 2 to request 3' on every later produce)."""
    rounds = [[f"quiet{r}.{i}" for i in range(40)] for r in range(10)]
    await _topics(keeper.address, {name: 1 for names in rounds for name in names})
    for names in rounds:  # each round's topics are new to the keeper: it asks tansu about each
        reader, writer = await asyncio.open_connection("127.0.0.1", keeper.port)
        request = _fetch([(name, 0, 0, 1 << 20) for name in names])
        writer.write(kp.frame(request.build_request_header(correlation_id=1, client_id="gone").encode()
                              + request.encode()))
        await writer.drain()
        await asyncio.sleep(0.002 * len(rounds[0]) * (rounds.index(names) % 3) / 2)
        writer.close()
        await asyncio.sleep(0.05)
    await _topics(keeper.address, {"fresh": 1})
    assert await asyncio.wait_for(_produce_one(keeper.address, "fresh", 0, b"x"), 30) == 0
    assert "response" not in keeper.log.read_text()
