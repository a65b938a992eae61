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

    async def record_present(self, event_ids: Sequence[str]) -> None:
        """IDs found in the log (a run that died did not record them)."""
        await self.conn.execute(
            "INSERT INTO ingest.appended (log_id, event_id) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING",
            self.log_id, list(event_ids),
        )

    async def marks(self) -> dict[tuple[str, int], int]:
        """Per partition: every record below the mark is recorded (ingest/reconcile.py)."""
        rows = await self.conn.fetch("SELECT topic, partition, mark FROM ingest.marks WHERE log_id = $1", self.log_id)
        return {(r["topic"], r["partition"]): r["mark"] for r in rows}

    async def move_marks(self, ends: dict[tuple[str, int], int]) -> None:
        if not ends:
            return
        items = sorted(ends.items())
        await self.conn.execute(
            "INSERT INTO ingest.marks AS m (log_id, topic, partition, mark) "
            "SELECT $1, * FROM unnest($2::text[], $3::int[], $4::bigint[]) "
            "ON CONFLICT (log_id, topic, partition) DO UPDATE SET mark = GREATEST(m.mark, EXCLUDED.mark)",
            self.log_id, [t for (t, _), _ in items], [p for (_, p), _ in items], [e for _, e in items],
        )
