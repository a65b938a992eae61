"""Markets: by identity for games, one game's market list, one market with its consensus lines.

Reads `markets` and `market_lines` (consensus per line) only; per-book prices stay internal."""

from __future__ import annotations

from typing import Sequence

import asyncpg

from api.queries.games import served_status

from api.queries.sql import Where
from schemas.read_models import MarketLineRecord, MarketRecord, column_list

MARKET_COLUMNS = column_list(MarketRecord, "m.")  # a market as its record (schemas.read_models)
# registry order: what a market is, never what it prices
MARKET_ORDER = "m.kind, m.type, m.period, coalesce(m.participant_id, ''), m.id"


async def markets_of_games(conn: asyncpg.Connection, schema: str, game_ids: Sequence[str]) -> list[asyncpg.Record]:
    if not game_ids:
        return []
    return await conn.fetch(
        f"SELECT {MARKET_COLUMNS} FROM {schema}.markets m WHERE m.game_id = ANY($1::text[]) "
        f"ORDER BY m.game_id, {MARKET_ORDER}",
        list(game_ids),
    )


async def list_markets(
    conn: asyncpg.Connection, schema: str, *, game_id: str, kind: str | None, market_type: str | None,
    period: str | None, after: Sequence[str] | None, limit: int,
) -> list[asyncpg.Record]:
    where = Where()
    where.add("m.game_id = {}", game_id)
    if kind is not None:
        where.add("m.kind = {}", kind)
    if market_type is not None:
        where.add("m.type = {}", market_type)
    if period is not None:
        where.add("m.period = {}", period)
    if after is not None:
        where.add("(m.kind, m.type, m.period, coalesce(m.participant_id, ''), m.id) > ({}, {}, {}, {}, {})", *after)
    return await conn.fetch(
        f"SELECT {MARKET_COLUMNS}, {served_status()} AS game_status FROM {schema}.markets m "
        f"JOIN {schema}.games g ON g.id = m.game_id WHERE {where.sql()} "
        f"ORDER BY {MARKET_ORDER} LIMIT {where.arg(limit)}",
        *where.args,
    )


async def get_market(conn: asyncpg.Connection, schema: str, market_id: str) -> asyncpg.Record | None:
    """The market with a summary of its game."""
    return await conn.fetchrow(
        f"SELECT {MARKET_COLUMNS}, g.name AS game_name, g.competition AS game_competition, "
        f"g.kickoff_at AS game_kickoff_at, coalesce({served_status()}, 'scheduled') AS game_status "
        f"FROM {schema}.markets m LEFT JOIN {schema}.games g ON g.id = m.game_id WHERE m.id = $1",
        market_id,
    )


async def market_versions(conn: asyncpg.Connection, schema: str, market_id: str) -> asyncpg.Record | None:
    """The versions (`xmin`, see api.kept.Versioned) of every row a market's detail is built
    from: the market, its game, and its lines in line order; None if there is no such market."""
    return await conn.fetchrow(
        f"SELECT m.xmin::text AS m_version, g.xmin::text AS g_version, {served_status()} AS game_status, "
        f"(SELECT array_agg(l.line_key || ':' || l.xmin::text ORDER BY l.line_key) FROM {schema}.market_lines l "
        f"WHERE l.market_id = m.id) AS l_versions "
        f"FROM {schema}.markets m LEFT JOIN {schema}.games g ON g.id = m.game_id WHERE m.id = $1",
        market_id,
    )


LINE_COLUMNS = column_list(MarketLineRecord)  # the record REST builds a line from


async def market_lines(conn: asyncpg.Connection, schema: str, market_id: str) -> list[asyncpg.Record]:
    """Consensus lines of a market: the main line first, then alternates by point."""
    return await conn.fetch(
        f"SELECT {LINE_COLUMNS} FROM {schema}.market_lines "
        f"WHERE market_id = $1 ORDER BY is_main DESC, point NULLS FIRST, line_key",
        market_id,
    )


async def main_lines(conn: asyncpg.Connection, schema: str, market_ids: Sequence[str]) -> dict[str, asyncpg.Record]:
    """The main line of each market (the line `market_lines` lists first), in one statement."""
    rows = await conn.fetch(
        f"SELECT DISTINCT ON (market_id) {LINE_COLUMNS} FROM {schema}.market_lines "
        f"WHERE market_id = ANY($1::text[]) ORDER BY market_id, is_main DESC, point NULLS FIRST, line_key",
        list(market_ids),
    )
    return {r["market_id"]: r for r in rows}
