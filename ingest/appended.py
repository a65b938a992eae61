"""Which events a log already holds, in Postgres: (dataset, log epoch, event_id).

The epoch matters: a fresh embedded broker is an empty log while Postgres still remembers the
old one. Per batch: one query for the IDs already appended, one statement recording the new
ones after the broker acknowledged them. A crash in between only means the next run sends
them again: a duplicate record the projector drops by `event_id`.
"""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from schemas.datasets import Dataset


class AppendedRegistry:
    def __init__(self, conn: asyncpg.Connection, log_id: int) -> None:
        self.conn = conn
        self.log_id = log_id

    @classmethod
    async def for_log(cls, conn: asyncpg.Connection, dataset: Dataset, epoch: str) -> AppendedRegistry:
        log_id = await conn.fetchval(
            """
            WITH new AS (
                INSERT INTO ingest.logs (dataset, epoch) VALUES ($1, $2)
                ON CONFLICT (dataset, epoch) DO NOTHING RETURNING log_id)
            SELECT log_id FROM new UNION ALL
            SELECT log_id FROM ingest.logs WHERE dataset = $1 AND epoch = $2
            """,
            dataset, epoch,
        )
        return cls(conn, log_id)

    async def known(self, event_ids: Sequence[str]) -> set[str]:
        if not event_ids:
            return set()
        rows = await self.conn.fetch(
            "SELECT event_id FROM ingest.appended WHERE log_id = $1 AND event_id = ANY($2::text[])",
            self.log_id, list(event_ids),
        )
        return {r[0] for r in rows}

    async def record(self, event_ids: Sequence[str]) -> None:
        """Record IDs the broker acknowledged: a binary COPY (the hot path); when another run
        recorded some of them meanwhile, the COPY fails whole and an upsert does it instead."""
        if not event_ids:
            return
        try:
            async with self.conn.transaction():
                await self.conn.copy_records_to_table(
                    "appended", schema_name="ingest", columns=("log_id", "event_id"),
                    records=[(self.log_id, i) for i in event_ids],
                )
        except asyncpg.UniqueViolationError:
            await self.conn.execute(
                "INSERT INTO ingest.appended (log_id, event_id) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING",
                self.log_id, list(event_ids),
            )
