"""The log epoch: a random ID written as the first record of the control topic.

The embedded broker keeps its log in memory, so a new broker starts every topic at offset 0
while Postgres still holds read models and tracking rows of the old log. Whatever was derived
from a log records its epoch; a different epoch means: derived state is stale, rebuild.
The first record wins, so concurrent starters agree.
"""

from __future__ import annotations

import asyncio

from aiokafka import TopicPartition

from infra.kafka import make_consumer, make_producer
from infra.settings import Settings
from schemas.datasets import CONTROL, Dataset, topic_name
from schemas.ids import random_id

_PREFIX = b"epoch:"


async def read_epoch(settings: Settings, dataset: Dataset, timeout: float = 10.0) -> str | None:
    """The epoch of the dataset's log, or None when none was written yet."""
    tp = TopicPartition(topic_name(dataset, CONTROL, settings.topic_namespace), 0)
    consumer = make_consumer(settings)
    await consumer.start()
    try:
        consumer.assign([tp])
        end = (await consumer.end_offsets([tp]))[tp]
        if end == 0:
            return None
        consumer.seek(tp, 0)
        deadline = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < deadline:
            batch = await consumer.getmany(tp, timeout_ms=500, max_records=1)
            for record in batch.get(tp, []):
                if record.value and record.value.startswith(_PREFIX):
                    return record.value[len(_PREFIX):].decode()
                return None
        raise TimeoutError("control topic has records but none could be read")
    finally:
        await consumer.stop()


async def ensure_epoch(settings: Settings, dataset: Dataset) -> str:
    """The dataset's epoch, writing a new one first when the log has none."""
    epoch = await read_epoch(settings, dataset)
    if epoch is not None:
        return epoch
    producer = make_producer(settings)
    await producer.start()
    try:
        await producer.send_and_wait(
            topic_name(dataset, CONTROL, settings.topic_namespace),
            _PREFIX + random_id("event").removeprefix("evt_").encode(),
            key=b"epoch",
            partition=0,
        )
    finally:
        await producer.stop()
    epoch = await read_epoch(settings, dataset)
    assert epoch is not None
    return epoch
