"""What a Wire snapshot reads: a game's or a market's row with its `last_seq`, in one
consistent view (the caller holds a REPEATABLE READ transaction)."""

from __future__ import annotations

import asyncpg

from api.queries.games import served_status  # the status REST serves, not the stored one
from schemas.read_models import LineData, column_list


async def game_row(conn: asyncpg.Connection, schema: str, game_id: str) -> asyncpg.Record | None:
    return await conn.fetchrow(
        f"SELECT id, {served_status()} AS status, score_home, score_away, period, clock, possession, last_play, "
        f"kickoff_at, kickoff_date, venue, source, as_of, last_seq FROM {schema}.games g WHERE id = $1",
        game_id,
    )


async def market_rows(
    conn: asyncpg.Connection, schema: str, market_id: str,
) -> tuple[asyncpg.Record | None, list[asyncpg.Record]]:
    row = await conn.fetchrow(
        f"SELECT m.id, m.game_id, m.kind, m.type, m.period, m.participant_id, m.name, m.status, m.status_reason, "
        f"m.main_point, m.books, m.source, m.as_of, m.last_seq, coalesce({served_status()}, 'scheduled') AS game_status "
        f"FROM {schema}.markets m LEFT JOIN {schema}.games g ON g.id = m.game_id WHERE m.id = $1",
        market_id,
    )
    if row is None:
        return None, []
    lines = await conn.fetch(
        f"SELECT {column_list(LineData)} FROM {schema}.market_lines WHERE market_id = $1",
        market_id,
    )
    return row, lines


async def game_freshness(conn: asyncpg.Connection, schema: str, game_ids: list[str]) -> list[asyncpg.Record]:
    """What the `feed` rechecks of several game topics: status, source and newest change."""
    return await conn.fetch(
        f"SELECT id, {served_status()} AS status, source, as_of FROM {schema}.games g WHERE id = ANY($1::text[])",
        game_ids,
    )


async def market_freshness(conn: asyncpg.Connection, schema: str, market_ids: list[str]) -> list[asyncpg.Record]:
    """The same of several market topics, with their game's status (a market settles with it)."""
    return await conn.fetch(
        f"SELECT m.id, coalesce({served_status()}, 'scheduled') AS game_status, m.source, m.as_of "
        f"FROM {schema}.markets m LEFT JOIN {schema}.games g ON g.id = m.game_id WHERE m.id = ANY($1::text[])",
        market_ids,
    )


async def last_seqs(conn: asyncpg.Connection, schema: str, table: str, ids: list[str]) -> dict[str, int]:
    """The last seq of several games or markets (`table`: `games` or `markets`) by ID."""
    rows = await conn.fetch(f"SELECT id, last_seq FROM {schema}.{table} WHERE id = ANY($1::text[])", ids)
    return {row["id"]: row["last_seq"] for row in rows}
