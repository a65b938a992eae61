"""Games with their two teams: lists (games, slate), one game, and the day's count."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Sequence

import asyncpg

from api.queries.sql import Where
from domain.game_status import RESULT_UNKNOWN, served_status_sql, started_sql
from api.queries.players import TEAM_REF_FIELDS
from schemas.read_model_tables import TeamRecord
from schemas.read_models import GameRecord, column_list

# each team as the part of its record a game shows (api.resources.common.team_ref), selected as
# home_<field> and away_<field>; its provenance as JSON text, which api.resources.common.provenance
# decodes straight into its struct, memoised (a page of games holds 40 team provenances, mostly
# the same few teams)
_TEAM_COLUMNS = ", ".join(
    column_list(TeamRecord, f"{alias}.", {"provenance": f"{alias}.provenance::text"}, only=TEAM_REF_FIELDS,
                as_prefix=f"{side}_")
    for side, alias in (("home", "h"), ("away", "a"))
)


# A game's served status (`scheduled` while its start is to come, `result_unknown` once it has
# passed with no report) is decided when the game is read, against the clock: one rule for REST
# and the Wire, in domain/game_status.py (docs/api.md, "Game status").
def served_status(alias: str = "g") -> str:
    return served_status_sql(alias)


def status_clause(where: Where, statuses: Sequence[str], alias: str = "g") -> None:
    """Games whose served status is one of `statuses` (indexable: on the stored status first)."""
    stored = sorted({"scheduled" if s == RESULT_UNKNOWN else s for s in statuses})
    started = started_sql(alias)
    parts = [f"{alias}.status = ANY({where.arg(stored)}::text[])"]
    if "scheduled" in statuses and RESULT_UNKNOWN not in statuses:
        parts.append(f"({alias}.status <> 'scheduled' OR NOT {started})")
    elif RESULT_UNKNOWN in statuses and "scheduled" not in statuses:
        parts.append(f"({alias}.status <> 'scheduled' OR {started})")
    where.clauses.append("(" + " AND ".join(parts) + ")")


# a game as its record (schemas.read_models.GameRecord), its status served against the clock,
# with its two teams beside it
GAME_COLUMNS = f"{column_list(GameRecord, 'g.', {'status': served_status()})}, {_TEAM_COLUMNS}"


# each row's version: the transaction that wrote the game's and each team's current row (`xmin`
# changes with every update), so a list item built from a row is kept until one of them changes
VERSION_COLUMNS = "g.g_version, h.xmin AS h_version, a.xmin AS a_version"


def _page_sql(schema: str, where: Where, after: tuple[datetime, str] | None, limit: int,
              columns: str = GAME_COLUMNS) -> str:
    """One page in kickoff order: the page is cut from `games` first and only its rows are
    joined with their teams (joining first would join every matching game, then sort)."""
    if after is not None:
        where.add("(g.kickoff_sort, g.id) > ({}, {})", *after)
    page = (
        f"SELECT *, xmin AS g_version FROM {schema}.games g WHERE {where.sql()} "
        f"ORDER BY g.kickoff_sort, g.id LIMIT {where.arg(limit)}"
    )
    return f"SELECT {columns} FROM {_teams_of(schema, page)} ORDER BY g.kickoff_sort, g.id"


def _teams_of(schema: str, games: str) -> str:
    """`games` (a table or a subquery) as `g`, with home team `h` and away team `a`."""
    return (
        f"({games}) g LEFT JOIN {schema}.teams h ON h.id = g.home_team_id "
        f"LEFT JOIN {schema}.teams a ON a.id = g.away_team_id"
    )


def competition_filter(schema: str, where: Where, competition: str) -> None:
    """A competition given as its slug or its `cmp_` ID."""
    if competition.startswith("cmp_"):
        where.add(f"g.competition = (SELECT slug FROM {schema}.competitions WHERE id = {{}})", competition)
    else:
        where.add("g.competition = {}", competition)


async def list_games(
    conn: asyncpg.Connection, schema: str, *, competition: str | None, season: str | None, week: int | None,
    status: str | None, kickoff_from: datetime | None, kickoff_to: datetime | None,
    after: tuple[datetime, str] | None, limit: int, versions_only: bool = False,
) -> list[asyncpg.Record]:
    """A page of games with their teams and row versions; `versions_only`: just each game's
    id, kickoff order and versions (a page whose items are all known needs no more)."""
    where = Where()
    if competition is not None:
        competition_filter(schema, where, competition)
    if season is not None:
        where.add("g.season = {}", season)
    if week is not None:
        where.add("g.week = {}", week)
    if status is not None:
        status_clause(where, [status])
    if kickoff_from is not None:
        where.add("g.kickoff_sort >= {}", kickoff_from)
    if kickoff_to is not None:
        where.add("g.kickoff_sort < {}", kickoff_to)
    columns = (f"g.id, g.kickoff_sort, {served_status()} AS status, {VERSION_COLUMNS}" if versions_only
               else f"{GAME_COLUMNS}, {VERSION_COLUMNS}")
    return await conn.fetch(_page_sql(schema, where, after, limit, columns), *where.args)



def _shifted(at: datetime, days: int) -> datetime:
    """`at` moved by `days`, held at the ends of the calendar (a slate of 0001-01-01 is empty,
    not an overflow)."""
    try:
        return at + timedelta(days=days)
    except OverflowError:
        return (datetime.min if days < 0 else datetime.max).replace(tzinfo=at.tzinfo)


def _day_filters(
    where: Where, *, day: date, starts_at: datetime, ends_at: datetime, sport: str | None,
    competition: str | None, statuses: Sequence[str] | None,
) -> None:
    # a game with a time is on the day when it starts within it; a game with only a date
    # (the source gave no time) is on the day of that date. kickoff_sort (indexed) is within a
    # day of either, which bounds the scan.
    where.add("g.kickoff_sort >= {} AND g.kickoff_sort < {}", _shifted(starts_at, -2), _shifted(ends_at, 2))
    where.add(
        "((g.kickoff_at >= {} AND g.kickoff_at < {}) OR (g.kickoff_at IS NULL AND g.kickoff_date = {}))",
        starts_at, ends_at, day,
    )
    if sport is not None:  # a sport slug or a competition slug
        placeholder = where.arg(sport)
        where.clauses.append(f"(g.sport = {placeholder} OR g.competition = {placeholder})")
    if competition is not None:
        where.add("g.competition = {}", competition)
    if statuses is not None:
        status_clause(where, statuses)


async def slate_games(
    conn: asyncpg.Connection, schema: str, *, day: date, starts_at: datetime, ends_at: datetime,
    sport: str | None, competition: str | None, statuses: Sequence[str] | None,
    after: tuple[datetime, str] | None, limit: int,
) -> tuple[int, list[asyncpg.Record]]:
    """The day's matching games (one page of them) and how many there are in all, read in one
    statement so the count and the page come from the same snapshot."""
    where = Where()
    _day_filters(where, day=day, starts_at=starts_at, ends_at=ends_at, sport=sport, competition=competition,
                 statuses=statuses)
    day_sql = f"SELECT * FROM {schema}.games g WHERE {where.sql()}"
    keyset = "TRUE" if after is None else f"(d.kickoff_sort, d.id) > ({where.arg(after[0])}, {where.arg(after[1])})"
    page = f"SELECT d.* FROM day d WHERE {keyset} ORDER BY d.kickoff_sort, d.id LIMIT {where.arg(limit)}"
    sql = (
        f"WITH day AS ({day_sql}) "
        f"SELECT t.total, p.* FROM (SELECT count(*) AS total FROM day) t "
        f"LEFT JOIN LATERAL (SELECT {GAME_COLUMNS} FROM {_teams_of(schema, page)}) p ON TRUE "
        f"ORDER BY p.kickoff_sort, p.id"
    )
    rows = await conn.fetch(sql, *where.args)
    total = rows[0]["total"] if rows else 0
    return total, [r for r in rows if r["id"] is not None]


async def get_game(conn: asyncpg.Connection, schema: str, game_id: str) -> asyncpg.Record | None:
    return await conn.fetchrow(f"SELECT {GAME_COLUMNS} FROM {_teams_of(schema, f'SELECT * FROM {schema}.games WHERE id = $1')}", game_id)


async def game_exists(conn: asyncpg.Connection, schema: str, game_id: str) -> bool:
    return await conn.fetchval(f"SELECT EXISTS (SELECT 1 FROM {schema}.games WHERE id = $1)", game_id)


async def first_kickoff(conn: asyncpg.Connection, schema: str) -> datetime | None:
    return await conn.fetchval(f"SELECT min(kickoff_sort) FROM {schema}.games")
