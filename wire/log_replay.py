"""Missed deltas from the retained log, for a resume this process has no memory of (it started
after the client's last delta, or the client comes from another API process behind the load
balancer).

A Wire topic's deltas all sit in one partition of `wire.deltas` (keyed by topic, the producer's
murmur2 partitioner, as every Kafka client computes it). The resume window is 120 seconds, so
the scan starts at the partition's first record of the last 120 seconds (Kafka's offsets for
times) and reads to the end offset taken at the start, keeping the resumed topics' records (a
socket resuming many topics reads each partition once). Resumes that arrive while a scan runs
wait for the next one, which serves them all (one read over the union of their topics, then each
client's own seqs picked out), so a restart that brings hundreds of clients back at once costs a
few scans, not one each. At most
`MAX_SCAN` records are read; past that the client gets a snapshot instead, which is always
correct (the gap rule).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Callable

from aiokafka import TopicPartition
from aiokafka.partitioner import DefaultPartitioner

from infra.kafka import make_consumer
from infra.settings import Settings
from infra.aiokafka_adapter import partitions_of
from projections.log_ends import high_watermarks
from wire.recent import RESUME_SECONDS, after

MAX_SCAN = 500_000  # records of one partition: ~2 s of reading here, past which a snapshot is cheaper
STOP_SECONDS = 3.0  # the longest a scan or a shutdown waits for a consumer's stop
SCAN_SECONDS = 10.0  # a resume's scans that take longer give up: its clients get snapshots
_partition_of = DefaultPartitioner()


@dataclass(eq=False)
class _Request:
    log_topic: str
    seconds: float
    last_seqs: dict[str, int]
    answer: asyncio.Future


class LogReplay:
    """One consumer per API process for resume scans, started on first use; scans take turns, and
    the resumes waiting for a turn share the next one."""

    def __init__(self, settings: Settings, delta_of: Callable[[bytes], object | None]) -> None:
        self._settings = settings
        self._delta_of = delta_of  # the fan-out's decoder: a record value to a Delta (None if undecodable)
        self._consumer = None
        self._lock = asyncio.Lock()
        self._waiting: list[_Request] = []  # resumes not yet taken by a scan
        self._open: set = set()  # every consumer made and not yet stopped, started or not
        self._stopping: set[asyncio.Task] = set()

    async def since(self, log_topic: str, last_seqs: dict[str, int], seconds: float = RESUME_SECONDS):
        """Per topic, its deltas after its last seq within the last `seconds`, complete and in seq
        order, or None when the log cannot say (a snapshot is needed). Each partition is read
        once, however many of the topics it holds. Resumes that wait while another scans are
        served together by the next scan, over the union of their topics (many clients resuming
        at once after a restart would otherwise queue one scan each)."""
        request = _Request(log_topic, seconds, last_seqs, asyncio.get_running_loop().create_future())
        self._waiting.append(request)
        try:
            async with self._lock:
                if not request.answer.done():
                    batch = [r for r in self._waiting if (r.log_topic, r.seconds) == (log_topic, seconds)]
                    for r in batch:
                        self._waiting.remove(r)
                    batch = [r for r in batch if not r.answer.done()]
                    if request not in batch:  # never left without an answer, whatever happened to its line
                        batch.append(request)
                    try:
                        await self._serve(log_topic, seconds, batch)
                    except BaseException:
                        # the others wait on: the next of them to take the lock scans for them
                        self._waiting.extend(r for r in batch if r is not request and not r.answer.done())
                        raise
            return request.answer.result()
        finally:
            if not request.answer.done():  # its caller gave up: no scan is to answer it
                request.answer.cancel()
            if request in self._waiting:
                self._waiting.remove(request)

    async def _serve(self, log_topic: str, seconds: float, batch: list[_Request]) -> None:
        consumer = self._consumer
        try:
            if consumer is None:
                consumer = make_consumer(self._settings, fetch_max_wait_ms=20)
                self._open.add(consumer)  # before start: a start cancelled midway must be stopped too
                await consumer.start()
                self._consumer = consumer
            topics = {topic for r in batch for topic in r.last_seqs}
            entries = await self._scan(consumer, log_topic, topics, seconds)
        except BaseException:
            # a broken connection, or a scan cancelled (its resume gave up) in the middle of a
            # fetch: a fresh consumer next time
            if self._consumer is consumer:
                self._consumer = None
            await self._stop(consumer)
            raise
        for r in batch:
            out = {}
            for topic, last_seq in r.last_seqs.items():
                found = entries[topic]
                found = None if found is None else after(found, last_seq)
                out[topic] = None if found is None else [delta for _, delta in found]
            if not r.answer.done():
                r.answer.set_result(out)

    async def _stop(self, consumer) -> None:
        """Stop `consumer`; the stop goes on even when the caller is cancelled again meanwhile, and
        is waited for at most `STOP_SECONDS` (aiokafka's stop of a consumer can hang in its fetcher:
        the next resume must not wait behind it, nor must a shutdown)."""
        if consumer is None or consumer not in self._open:
            return
        self._open.discard(consumer)
        task = asyncio.ensure_future(consumer.stop())
        self._stopping.add(task)
        task.add_done_callback(self._stopped)
        await asyncio.wait({task}, timeout=STOP_SECONDS)  # waits without cancelling it

    def _stopped(self, task: asyncio.Task) -> None:
        self._stopping.discard(task)
        if not task.cancelled():
            task.exception()  # a consumer that fails to stop is gone anyway: nothing to retry

    async def _scan(self, consumer, log_topic: str, topics: set[str], seconds: float):
        """Per topic, its (seq, delta) on the log in log order, or None when its partition could
        not be read."""
        out: dict[str, list | None] = {topic: None for topic in topics}
        tps = await partitions_of(consumer, [log_topic])
        if not tps:
            return out
        numbers = [t.partition for t in tps]
        by_partition: dict[int, dict[bytes, str]] = {}
        for topic in topics:
            key = topic.encode()
            by_partition.setdefault(_partition_of(key, numbers, None), {})[key] = topic
        deadline = time.monotonic() + SCAN_SECONDS
        for partition, keys in sorted(by_partition.items()):
            entries = await self._read(consumer, TopicPartition(log_topic, partition), keys, seconds, deadline)
            if entries is None:
                continue
            for key, topic in keys.items():
                out[topic] = entries.get(key, [])
        return out

    async def _read(self, consumer, tp: TopicPartition, keys: dict[bytes, str], seconds: float, deadline: float):
        """The deltas of `keys` on the partition from `seconds` back to its end as of now, as
        (seq, delta) per key in log order; None when that is too much to read."""
        end = (await high_watermarks(consumer, [tp]))[(tp.topic, tp.partition)]
        found = (await consumer.offsets_for_times({tp: int((time.time() - seconds) * 1000)})).get(tp)
        # none at or after that time (some brokers say so with timestamp -1): nothing to read
        start = end if found is None or found.timestamp < 0 else found.offset
        if end - start > MAX_SCAN:
            return None
        consumer.assign([tp])
        consumer.seek(tp, start)
        entries: dict[bytes, list] = {}
        position = start
        while position < end:
            if time.monotonic() > deadline:
                return None
            batches = await consumer.getmany(tp, timeout_ms=1_000, max_records=10_000)
            records = batches.get(tp, [])
            if not records:
                if await consumer.position(tp) >= end:
                    break
                continue
            for record in records:
                if record.offset >= end:
                    break
                if record.key in keys and (delta := self._delta_of(record.value)) is not None:
                    entries.setdefault(record.key, []).append((delta.seq, delta))
            position = records[-1].offset + 1
        return entries

    async def aclose(self) -> None:
        self._consumer = None
        for consumer in list(self._open):
            await self._stop(consumer)
