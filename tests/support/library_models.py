"""The shipped reference library as the projector writes it: the ingest's plan folded by the
real reducer into the real rows, inserted with the projector's own upserts (for API tests)."""

from __future__ import annotations

from datetime import datetime, timezone

import asyncpg

from ingest.library import library_root, plan, read_library
from projections.pg_writer import upsert_sql
from projections.reducers.content import reduce_library
from projections.rows import RowSet, batch_rows

INGESTED = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)
TABLES = ("reference_entries", "reference_revisions", "search_index")


def library_rows() -> RowSet:
    events, letters = plan(read_library(library_root()), {}, INGESTED)
    assert not letters, [(d.file, d.reason) for d in letters]
    states: dict = {}
    for e in events:
        states[e.entry_id], _ = reduce_library(states.get(e.entry_id), e)
    return batch_rows(dict.fromkeys(states), states, {}, 0)


async def insert_library(conn: asyncpg.Connection, schema: str, rows: RowSet | None = None) -> None:
    rows = rows or library_rows()
    for table in TABLES:
        data = rows.rows[table]
        if data:
            await conn.execute(upsert_sql(schema, table), *(list(col) for col in zip(*data)))
