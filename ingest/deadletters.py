"""Reading a dataset's dead letters back (`svc ingest dead-letters`, tests)."""

from __future__ import annotations

from aiokafka import TopicPartition

from infra.kafka import make_consumer, started
from infra.settings import Settings
from schemas.datasets import DEADLETTER, Dataset, topic_name
from schemas.deadletter import DeadLetter, decode_deadletter


async def read_dead_letters(settings: Settings, dataset: Dataset) -> list[DeadLetter]:
    """Every dead letter on the dataset's topic, oldest first (it has one partition)."""
    tp = TopicPartition(topic_name(dataset, DEADLETTER, settings.topic_namespace), 0)
    out: list[DeadLetter] = []
    async with started(make_consumer(settings)) as consumer:
        consumer.assign([tp])
        end = (await consumer.end_offsets([tp]))[tp]
        await consumer.seek_to_beginning(tp)
        learned = False
        while not learned or await consumer.position(tp) < end:
            batch = await consumer.getmany(tp, timeout_ms=500, max_records=10_000)
            if not learned and (hw := consumer.highwater(tp)) is not None:
                # the fetch's high watermark: tansu lists a short end offset (see ingest/export.py)
                end, learned = max(end, hw), True
            out.extend(decode_deadletter(r.value) for r in batch.get(tp, []) if r.offset < end)
    return out
