"""What a run that died left in the log unrecorded: found and recorded before the next run.

A run records an event as appended once the broker acknowledged it. A run killed between the
two leaves events in the log that the registry does not know, and the next run would append
them again (a second copy in the log). So each log keeps, per feed partition, a mark: every
record below it is recorded. At the start of a run the records from the marks to the log end
are read and their event IDs recorded, and the marks move to the end.

A run that ends cleanly moves the marks itself when it alone appended since its start (the
partitions grew by exactly what it appended), so one run after another reads nothing again.
"""

from __future__ import annotations

import asyncio
import time

import msgspec

from infra.aiokafka_adapter import partitions_of
from infra.kafka import make_consumer, started
from infra.settings import Settings
from ingest.appended import AppendedRegistry
from schemas.datasets import DEADLETTER, FEED_TOPICS, Dataset, topic_name
from schemas.deadletter import decode_deadletter

TP = tuple[str, int]
STALL_SECONDS = 30.0


class _EventId(msgspec.Struct):
    event_id: str


_event_id = msgspec.json.Decoder(_EventId).decode


def log_topics(settings: Settings, dataset: Dataset) -> dict[str, str]:
    """Topic name -> base name of the topics ingest appends to."""
    return {topic_name(dataset, base, settings.topic_namespace): base for base in (*FEED_TOPICS, DEADLETTER)}


async def read_ids(settings: Settings, dataset: Dataset, marks: dict[TP, int]) -> tuple[list[str], dict[TP, int]]:
    """Event (and dead-letter) IDs of the records from `marks` to the end, and the ends."""
    from ingest.event_log import dead_letter_id

    names = log_topics(settings, dataset)
    async with started(make_consumer(settings, fetch_max_wait_ms=10)) as consumer:
        tps = await partitions_of(consumer, list(names))
        if not tps:
            return [], {}
        consumer.assign(tps)
        for tp in tps:
            consumer.seek(tp, marks.get((tp.topic, tp.partition), 0))
        ids: list[str] = []
        ends: dict[TP, int] = {}
        pending = set(tps)
        last_progress = time.monotonic()
        while pending:
            fetched = await consumer.getmany(*pending, timeout_ms=100, max_records=20_000)
            for tp, records in fetched.items():
                dead = names[tp.topic] == DEADLETTER
                for r in records:
                    if r.value is None:
                        continue
                    try:
                        ids.append(dead_letter_id(decode_deadletter(r.value)) if dead else _event_id(r.value).event_id)
                    except msgspec.DecodeError:
                        continue  # not ours: nothing to record
            for tp in list(pending):
                mark = consumer.highwater(tp)  # known once the partition answered a fetch
                if mark is not None and await consumer.position(tp) >= mark:
                    ends[(tp.topic, tp.partition)] = mark
                    pending.discard(tp)
            if fetched:
                last_progress = time.monotonic()
            elif time.monotonic() - last_progress > STALL_SECONDS:
                raise asyncio.TimeoutError(f"no records from {sorted(map(str, pending))} below their ends")
        return ids, ends


async def log_ends(settings: Settings, dataset: Dataset, marks: dict[TP, int]) -> dict[TP, int]:
    """The ends of the partitions (reading nothing when they did not grow past the marks)."""
    async with started(make_consumer(settings, fetch_max_wait_ms=10)) as consumer:
        tps = await partitions_of(consumer, list(log_topics(settings, dataset)))
        consumer.assign(tps)
        for tp in tps:  # one record before the mark: the fetch answers with the high watermark
            consumer.seek(tp, max(marks.get((tp.topic, tp.partition), 0) - 1, 0))
        ends: dict[TP, int] = {}
        deadline = time.monotonic() + STALL_SECONDS
        while len(ends) < len(tps):
            if time.monotonic() > deadline:
                raise asyncio.TimeoutError("no high watermark for the ingest topics")
            await consumer.getmany(timeout_ms=100, max_records=1)
            for tp in tps:
                mark = consumer.highwater(tp)
                if mark is not None:
                    ends[(tp.topic, tp.partition)] = mark
        return ends


async def reconcile(settings: Settings, dataset: Dataset, appended: AppendedRegistry) -> dict[TP, int]:
    """Record what the log holds past the marks; returns the marks now (the ends read)."""
    marks = await appended.marks()
    ids, ends = await read_ids(settings, dataset, marks)
    if ids:
        await appended.record_present(ids)
    await appended.move_marks(ends)
    return ends


async def close_run(settings: Settings, dataset: Dataset, appended: AppendedRegistry,
                    start: dict[TP, int], appended_records: int) -> None:
    """After a clean run: move the marks to the ends if the partitions grew by exactly what this
    run appended (nobody else appended meanwhile, so everything past `start` is recorded)."""
    if not appended_records:
        return
    ends = await log_ends(settings, dataset, start)
    grown = sum(end - start.get(tp, 0) for tp, end in ends.items())
    if grown == appended_records:
        await appended.move_marks(ends)
