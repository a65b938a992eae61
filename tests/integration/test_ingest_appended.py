"""The registry of appended events in Postgres: what the dropped foreign key gave is kept by
triggers (migration 0097): deleting a log deletes its rows, a log's ID cannot change, and a
batch is still recorded once (a repeat goes the upsert way)."""

from __future__ import annotations

import asyncpg
import pytest

from ingest.appended import AppendedRegistry


async def test_a_log_takes_its_rows_with_it_and_keeps_its_id(database_url):
    conn = await asyncpg.connect(database_url)
    try:
        first = await AppendedRegistry.for_log(conn, "live", "epoch-1")
        other = await AppendedRegistry.for_log(conn, "live", "epoch-2")
        await first.record(["evt_a", "evt_b"])
        await other.record(["evt_a"])
        await first.record(["evt_b", "evt_c"])  # b again: the COPY fails whole, the upsert records c
        assert await first.known(["evt_a", "evt_b", "evt_c", "evt_d"]) == {"evt_a", "evt_b", "evt_c"}

        with pytest.raises(asyncpg.RaiseError, match="cannot change"):
            await conn.execute("UPDATE ingest.logs SET log_id = log_id + 100 WHERE log_id = $1", first.log_id)
        await conn.execute("UPDATE ingest.logs SET epoch = epoch WHERE log_id = $1", first.log_id)  # other columns may

        await conn.execute("DELETE FROM ingest.logs WHERE log_id = $1", first.log_id)
        rows = await conn.fetch("SELECT log_id, event_id FROM ingest.appended ORDER BY event_id")
        assert [tuple(r) for r in rows] == [(other.log_id, "evt_a")]
        await conn.execute("DELETE FROM ingest.logs")
        assert await conn.fetchval("SELECT count(*) FROM ingest.appended") == 0
    finally:
        await conn.close()
