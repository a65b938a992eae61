"""The reads an answer needs: games by their teams and dates, a game's markets, a day's or a
week's games. Read-only SQL over the read models (names are looked up by api.answers.names)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime

import asyncpg

from api.queries import games as games_sql
from api.queries.sql import Where
from schemas.read_models import MarketRecord, column_list

# what an answer says of each of a game's markets
_GAME_MARKET = column_list(MarketRecord, "m.", only=("id", "kind", "type", "period", "participant_id", "name", "status"))

GAME_ROW = (f"{games_sql.GAME_COLUMNS}, "
            f"EXISTS (SELECT 1 FROM {{schema}}.markets m WHERE m.game_id = g.id) AS market_count")


async def games_for(
    conn: asyncpg.Connection, schema: str, *, team_ids: Sequence[str], both: bool, competition: str | None,
    season: str | None, week: int | None, day_from: datetime | None, day_to: datetime | None, limit: int = 400,
) -> list[asyncpg.Record]:
    """Games of these teams (both of them, or any), in kickoff order, with how many markets each has."""
    where = Where()
    if team_ids:
        if both and len(team_ids) >= 2:
            where.add("g.home_team_id = ANY({}::text[]) AND g.away_team_id = ANY({}::text[])",
                      list(team_ids[:2]), list(team_ids[:2]))
        else:
            ids = where.arg(list(team_ids))
            where.clauses.append(f"(g.home_team_id = ANY({ids}::text[]) OR g.away_team_id = ANY({ids}::text[]))")
    if competition is not None:
        where.add("g.competition = {}", competition)
    if season is not None:
        where.add("g.season = {}", season)
    if week is not None:
        where.add("g.week = {}", week)
    if day_from is not None:
        where.add("g.kickoff_sort >= {}", day_from)
    if day_to is not None:
        where.add("g.kickoff_sort < {}", day_to)
    page = f"SELECT * FROM {schema}.games g WHERE {where.sql()} ORDER BY g.kickoff_sort, g.id LIMIT {where.arg(limit)}"
    sql = f"SELECT {GAME_ROW.format(schema=schema)} FROM {games_sql._teams_of(schema, page)} ORDER BY g.kickoff_sort, g.id"
    return await conn.fetch(sql, *where.args)


async def game_by_id(conn: asyncpg.Connection, schema: str, game_id: str) -> asyncpg.Record | None:
    """One game in the shape `games_for` gives (a live answer re-derived reads its game again)."""
    page = f"SELECT * FROM {schema}.games g WHERE g.id = $1"
    return await conn.fetchrow(f"SELECT {GAME_ROW.format(schema=schema)} FROM {games_sql._teams_of(schema, page)}",
                               game_id)


async def game_days(conn: asyncpg.Connection, schema: str, around: datetime) -> tuple[datetime | None, datetime | None]:
    """The kickoffs of the game nearest before and after `around` (the data's calendar)."""
    row = await conn.fetchrow(
        f"SELECT (SELECT max(kickoff_sort) FROM {schema}.games WHERE kickoff_sort <= $1) AS before, "
        f"(SELECT min(kickoff_sort) FROM {schema}.games WHERE kickoff_sort > $1) AS after",
        around,
    )
    return (row["before"], row["after"]) if row else (None, None)


async def latest_season(conn: asyncpg.Connection, schema: str, competition: str | None, at: datetime) -> str | None:
    """The newest season with a game at or before `at` (else the first one after)."""
    where = "competition = $2" if competition else "$2::text IS NULL"
    return await conn.fetchval(
        f"SELECT season FROM {schema}.games WHERE {where} AND season IS NOT NULL "
        f"ORDER BY (kickoff_sort <= $1) DESC, CASE WHEN kickoff_sort <= $1 THEN kickoff_sort END DESC NULLS LAST, "
        f"kickoff_sort LIMIT 1",
        at, competition,
    )


async def game_markets(conn: asyncpg.Connection, schema: str, game_id: str) -> list[asyncpg.Record]:
    """A game's game markets (not props or futures), in registry order."""
    return await conn.fetch(
        f"SELECT {_GAME_MARKET} FROM {schema}.markets m "
        f"WHERE m.game_id = $1 AND m.kind = 'game' ORDER BY m.type, m.period, coalesce(m.participant_id, ''), m.id",
        game_id,
    )


async def day_games(conn: asyncpg.Connection, schema: str, *, starts_at: datetime, ends_at: datetime, day: date,
                    competition: str | None, limit: int) -> tuple[int, list[asyncpg.Record]]:
    return await games_sql.slate_games(
        conn, schema, day=day, starts_at=starts_at, ends_at=ends_at, sport=None, competition=competition,
        statuses=None, after=None, limit=limit,
    )


async def week_games(conn: asyncpg.Connection, schema: str, *, competition: str, season: str, week: int,
                     limit: int) -> list[asyncpg.Record]:
    return await games_sql.list_games(
        conn, schema, competition=competition, season=season, week=week, status=None, kickoff_from=None,
        kickoff_to=None, after=None, limit=limit,
    )
