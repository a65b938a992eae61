"""Projection lag per projector group and partition: log end offsets minus what the read
models hold (the Postgres tracking rows), which is what readers actually see. Partitions
tracked in another log epoch count as not applied at all."""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from infra.log_epoch import read_epoch
from infra.settings import Settings
from projections.log_ends import log_end_offsets
from projections.pg_state import read_tracking
from schemas.datasets import DATASETS, FEED_TOPICS, Dataset, pg_schema, topic_name


def group_name(settings: Settings) -> str:
    """The projector's consumer group (the faust app id): one group over both datasets."""
    return f"{settings.topic_namespace}svc-projector"


@dataclass
class PartitionLag:
    group: str
    dataset: str
    topic: str
    partition: int
    end: int
    applied: int  # records applied (tracked offset + 1)
    lag: int


async def measure(settings: Settings, conn: asyncpg.Connection,
                  datasets: tuple[Dataset, ...] = DATASETS) -> tuple[list[PartitionLag], dict[str, int]]:
    """Lag rows, and per dataset the deltas still waiting in the outbox."""
    rows: list[PartitionLag] = []
    outbox: dict[str, int] = {}
    for dataset in datasets:
        schema = pg_schema(dataset)
        topics = [topic_name(dataset, base, settings.topic_namespace) for base in FEED_TOPICS]
        ends = await log_end_offsets(settings, topics)
        epoch = await read_epoch(settings, dataset)
        tracking = await read_tracking(conn, schema)
        for (topic, partition), end in sorted(ends.items()):
            offset, tracked_epoch = tracking.get((topic, partition), (-1, epoch))
            applied = offset + 1 if tracked_epoch == epoch else 0
            # negative lag: read models ahead of this log (stale; the projector rebuilds them)
            rows.append(PartitionLag(group_name(settings), dataset, topic, partition, end, applied, end - applied))
        outbox[dataset] = await conn.fetchval(f'SELECT count(*) FROM "{schema}".outbox')
    return rows, outbox
