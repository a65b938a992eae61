"""End offsets of partitions, read from the fetch high watermark.

tansu answers ListOffsets(latest) with the base offset of the partition's last record batch
plus one, which undercounts whenever a producer batched several records (found here: 8
records in two batches listed as 6). A fetch response's high watermark is right on tansu and on
Kafka alike, so: list offsets (a lower bound), fetch from just below them, read the watermark.
"""

from __future__ import annotations

import asyncio
import time

from aiokafka import AIOKafkaConsumer, TopicPartition

from infra.aiokafka_adapter import partitions_of
from infra.kafka import make_consumer, started
from infra.settings import Settings

TP = tuple[str, int]


async def high_watermarks(consumer: AIOKafkaConsumer, tps: list[TopicPartition], timeout: float = 10.0) -> dict[TP, int]:
    """Exact end offsets of `tps`; reassigns the consumer to them (positions are lost)."""
    if not tps:
        return {}
    listed = await consumer.end_offsets(tps)
    consumer.assign(tps)
    for tp in tps:
        consumer.seek(tp, max(listed[tp] - 1, 0))
    marks: dict[TopicPartition, int] = {}
    deadline = time.monotonic() + timeout
    while len(marks) < len(tps):
        if time.monotonic() > deadline:
            raise asyncio.TimeoutError(f"no high watermark for {sorted(set(tps) - set(marks))}")
        await consumer.getmany(timeout_ms=100, max_records=1)
        for tp in tps:
            mark = consumer.highwater(tp)
            if mark is not None:
                marks[tp] = max(mark, listed[tp])
    return {(tp.topic, tp.partition): offset for tp, offset in marks.items()}


async def log_end_offsets(settings: Settings, topics: list[str]) -> dict[TP, int]:
    async with started(make_consumer(settings, fetch_max_wait_ms=50)) as consumer:
        return await high_watermarks(consumer, await partitions_of(consumer, topics))


async def record_times(settings: Settings, positions: dict[TP, int], timeout: float = 10.0) -> dict[TP, float]:
    """The log time (seconds since the epoch: the record's Kafka timestamp, which our producers
    leave to the client clock at send) of the record at each (topic, partition) -> offset; the
    partition's first record where the offset is below what the log still holds."""
    if not positions:
        return {}
    async with started(make_consumer(settings, fetch_max_wait_ms=50)) as consumer:
        tps = {TopicPartition(topic, partition): offset for (topic, partition), offset in positions.items()}
        consumer.assign(list(tps))
        for tp, offset in tps.items():
            consumer.seek(tp, offset)
        found: dict[TP, float] = {}
        deadline = time.monotonic() + timeout
        while len(found) < len(tps):
            if time.monotonic() > deadline:
                raise asyncio.TimeoutError(f"no record at {sorted(set(positions) - set(found))}")
            for tp, records in (await consumer.getmany(timeout_ms=100, max_records=len(tps))).items():
                if records and (tp.topic, tp.partition) not in found:
                    found[(tp.topic, tp.partition)] = records[0].timestamp / 1000
                    consumer.pause(tp)  # one record is all we need of it
        return found
