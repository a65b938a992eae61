"""`svc export`: a dataset's canonical log (the feed topics) as JSON Lines.

Each line: `{"ts", "topic", "partition", "offset", "key", "event"}` where `ts` is the record's
log time (Kafka record timestamp), `topic` the feed topic without namespace or dataset prefix,
and `event` the record's bytes as they are on the log. Partitions are merged by record
timestamp, k-way, each partition's order kept: replaying the file into a fresh log puts every
entity's events in the same order again.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import msgspec
from aiokafka import TopicPartition

from infra.aiokafka_adapter import partitions_of
from infra.kafka import make_consumer, started
from infra.settings import Settings
from schemas.datasets import FEED_TOPICS, Dataset, topic_name
from schemas.events import decode

STALL_LIMIT = 120  # empty fetches of 0.5 s in a row before giving up on a partition
TOPIC_ORDER = {base: i for i, base in enumerate(FEED_TOPICS)}  # teams, games, players, library on ties


@dataclass(frozen=True, slots=True)
class LogRecord:
    topic: str  # base name: feed.games
    partition: int
    offset: int
    timestamp_ms: int
    key: bytes
    value: bytes

    def sort_key(self) -> tuple[int, int, int]:
        return self.timestamp_ms, TOPIC_ORDER[self.topic], self.partition


class ExportLine(msgspec.Struct, kw_only=True):
    ts: datetime
    topic: str
    key: str
    event: msgspec.Raw
    partition: int | None = None
    offset: int | None = None


_line_encoder = msgspec.json.Encoder()


def to_ms(ts: datetime) -> int:
    return int(ts.timestamp() * 1000)


async def read_log(
    settings: Settings, dataset: Dataset, since: datetime | None = None, until: datetime | None = None,
    bases: tuple[str, ...] = FEED_TOPICS,
) -> AsyncIterator[LogRecord]:
    """The feed records of the dataset's log (of the feed topics `bases`) up to its end when
    called, in merged order."""
    names = {topic_name(dataset, base, settings.topic_namespace): base for base in bases}
    async with started(make_consumer(settings)) as consumer:
        tps = await partitions_of(consumer, list(names))
        consumer.assign(tps)
        end = await consumer.end_offsets(tps)
        start = await consumer.beginning_offsets(tps)
        if since is not None:
            found = await consumer.offsets_for_times({tp: to_ms(since) for tp in tps})
            start = {tp: (found[tp].offset if found.get(tp) is not None else end[tp]) for tp in tps}
        for tp in tps:
            consumer.seek(tp, start[tp])
        # every partition is fetched once to learn its high watermark: the end is the larger of
        # that and the listed end offset (tansu lists the last batch's base offset + 1 as the
        # end, which undercounts a partition whose last batch holds several records)
        learned: set[TopicPartition] = set()
        pending = set(tps)
        buffers: dict[TopicPartition, deque[LogRecord]] = {tp: deque() for tp in tps}
        stalled = 0
        lo, hi = (to_ms(since) if since else None), (to_ms(until) if until else None)
        while pending or any(buffers.values()):
            # merge while every partition that may still deliver has a head to compare
            while not any(tp in pending and not buffers[tp] for tp in tps):
                heads = [(buf[0].sort_key(), i) for i, buf in enumerate(buffers.values()) if buf]
                if not heads:
                    break
                record = buffers[tps[min(heads)[1]]].popleft()
                if (lo is None or record.timestamp_ms >= lo) and (hi is None or record.timestamp_ms <= hi):
                    yield record
            if not pending:
                continue
            fetched = await consumer.getmany(*pending, timeout_ms=500, max_records=10_000)
            for tp in list(pending):
                if tp not in learned and (hw := consumer.highwater(tp)) is not None:
                    end[tp] = max(end[tp], hw)
                    learned.add(tp)
            for tp, records in fetched.items():
                for r in records:
                    if r.offset < end[tp]:
                        buffers[tp].append(LogRecord(names[tp.topic], tp.partition, r.offset, r.timestamp, r.key or b"", r.value))
            for tp in list(pending):
                if tp in learned and await consumer.position(tp) >= end[tp]:
                    pending.discard(tp)
            stalled = 0 if fetched else stalled + 1
            if stalled > STALL_LIMIT:
                raise TimeoutError(f"no records from {sorted(str(tp) for tp in pending)} below their end offsets")


def merged(partitions: list[list[LogRecord]]) -> list[LogRecord]:
    """The k-way merge on its own (each list one partition's records in offset order)."""
    return list(heapq.merge(*partitions, key=LogRecord.sort_key))


async def export(
    settings: Settings, dataset: Dataset, out: Path, since: datetime | None = None, until: datetime | None = None,
) -> dict[str, int]:
    """Write the log to `out`; returns counts (lines written, records skipped as undecodable)."""
    written = skipped = 0
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as f:
        async for r in read_log(settings, dataset, since, until):
            try:
                decode(r.value)
            except msgspec.DecodeError:
                skipped += 1  # not a canonical event (written by hand?): not part of the canonical log
                continue
            line = ExportLine(
                ts=datetime.fromtimestamp(r.timestamp_ms / 1000, timezone.utc), topic=r.topic, key=r.key.decode(),
                event=msgspec.Raw(r.value), partition=r.partition, offset=r.offset,
            )
            f.write(_line_encoder.encode(line) + b"\n")
            written += 1
    return {"lines": written, "skipped": skipped}
