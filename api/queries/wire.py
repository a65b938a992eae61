"""What a Wire snapshot reads: a game's or a market's row with its `last_seq`, in one
consistent view (the caller holds a REPEATABLE READ transaction)."""

from __future__ import annotations

import asyncpg

from api.queries.games import served_status  # the status REST serves, not the stored one
from schemas.read_models import GameRecord, LineData, MarketRecord, column_list

# The parts of a game and a market the Wire's snapshots and freshness checks read, named from
# their record models (a name the model lacks fails at import); a game's status as served.
_SERVED = {"status": served_status()}
_GAME_STATE = column_list(GameRecord, "g.", _SERVED, only=(
    "id", "status", "score_home", "score_away", "period", "clock", "possession", "last_play", "kickoff_at",
    "kickoff_date", "venue", "source", "as_of", "last_seq"))
_GAME_FRESHNESS = column_list(GameRecord, "g.", _SERVED, only=("id", "status", "source", "as_of"))
_MARKET_HEAD = column_list(MarketRecord, "m.", only=(
    "id", "game_id", "kind", "type", "period", "participant_id", "name", "status", "status_reason", "main_point",
    "books", "source", "as_of", "last_seq"))
_MARKET_FRESHNESS = column_list(MarketRecord, "m.", only=("id", "source", "as_of"))
_GAME_STATUS = f"coalesce({served_status()}, 'scheduled') AS game_status"  # a market settles with its game


async def game_row(conn: asyncpg.Connection, schema: str, game_id: str) -> asyncpg.Record | None:
    return await conn.fetchrow(
        f"SELECT {_GAME_STATE} FROM {schema}.games g WHERE g.id = $1",
        game_id,
    )


async def market_rows(
    conn: asyncpg.Connection, schema: str, market_id: str,
) -> tuple[asyncpg.Record | None, list[asyncpg.Record]]:
    row = await conn.fetchrow(
        f"SELECT {_MARKET_HEAD}, {_GAME_STATUS} FROM {schema}.markets m LEFT JOIN {schema}.games g ON g.id = m.game_id WHERE m.id = $1",
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
        f"SELECT {_GAME_FRESHNESS} FROM {schema}.games g WHERE g.id = ANY($1::text[])",
        game_ids,
    )


async def market_freshness(conn: asyncpg.Connection, schema: str, market_ids: list[str]) -> list[asyncpg.Record]:
    """The same of several market topics, with their game's status (a market settles with it)."""
    return await conn.fetch(
        f"SELECT {_MARKET_FRESHNESS}, {_GAME_STATUS} FROM {schema}.markets m LEFT JOIN {schema}.games g ON g.id = m.game_id WHERE m.id = ANY($1::text[])",
        market_ids,
    )


async def last_seqs(conn: asyncpg.Connection, schema: str, table: str, ids: list[str]) -> dict[str, int]:
    """The last seq of several games or markets (`table`: `games` or `markets`) by ID."""
    rows = await conn.fetch(f"SELECT id, last_seq FROM {schema}.{table} WHERE id = ANY($1::text[])", ids)
    return {row["id"]: row["last_seq"] for row in rows}
