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
from infra.kafka import make_consumer
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
    consumer = make_consumer(settings, fetch_max_wait_ms=50)
    await consumer.start()
    try:
        return await high_watermarks(consumer, await partitions_of(consumer, topics))
    finally:
        await consumer.stop()
