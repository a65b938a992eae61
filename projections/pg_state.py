"""Reading the projector's truth back from a dataset schema: meta, tracking and state parts."""

from __future__ import annotations

import asyncpg

from projections.batch import TP


async def ensure_meta(conn: asyncpg.Connection, schema: str, epoch: str) -> tuple[str, int]:
    """(epoch, generation) of the schema's read models; a fresh schema takes `epoch`."""
    await conn.execute(
        f'INSERT INTO "{schema}".projection_meta (id, epoch) VALUES (1, $1) ON CONFLICT (id) DO NOTHING', epoch
    )
    row = await conn.fetchrow(f'SELECT epoch, generation FROM "{schema}".projection_meta WHERE id = 1')
    return row["epoch"], row["generation"]


async def read_tracking(conn: asyncpg.Connection, schema: str) -> dict[TP, tuple[int, str]]:
    rows = await conn.fetch(f'SELECT topic, partition, last_offset, epoch FROM "{schema}".tracking')
    return {(r["topic"], r["partition"]): (r["last_offset"], r["epoch"]) for r in rows}


async def read_parts(conn: asyncpg.Connection, schema: str) -> tuple[list[tuple[str, bytes]], list[tuple]]:
    parts = [(r["part"], r["state"]) for r in await conn.fetch(f'SELECT part, state FROM "{schema}".projector_state')]
    quotes = [
        (r["market_id"], r["line_key"], r["book"], r)
        for r in await conn.fetch(
            "SELECT market_id, line_key, book, kind, outcomes::text AS outcomes, source, source_ts, event_id, "
            f'book_name, ingest_ts FROM "{schema}".book_prices'
        )
    ]
    return parts, quotes
