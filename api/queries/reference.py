"""Sports, competitions and seasons, in registry (slug) order."""

from __future__ import annotations

from typing import Sequence

import asyncpg

from schemas.read_model_tables import CompetitionRecord, SeasonRecord, SportRecord
from schemas.read_models import column_list

# the parts of the records the sport and competition resources show
_SPORT = column_list(SportRecord, only=("id", "slug", "name", "source", "as_of"))
_COMPETITION_OF_SPORT = column_list(CompetitionRecord, only=("id", "slug", "name", "sport", "as_of"))
_COMPETITION = column_list(CompetitionRecord, only=("id", "slug", "name", "sport", "source", "as_of"))
_SEASON = column_list(SeasonRecord, only=("id", "competition", "label", "year", "starts_on", "ends_on", "as_of"))


async def sports(conn: asyncpg.Connection, schema: str) -> list[asyncpg.Record]:
    return await conn.fetch(f"SELECT {_SPORT} FROM {schema}.sports ORDER BY slug")


async def competitions_of_sports(conn: asyncpg.Connection, schema: str) -> list[asyncpg.Record]:
    return await conn.fetch(f"SELECT {_COMPETITION_OF_SPORT} FROM {schema}.competitions ORDER BY slug")


async def competitions(
    conn: asyncpg.Connection, schema: str, *, sport: str | None, after: str | None, limit: int,
) -> list[asyncpg.Record]:
    return await conn.fetch(
        f"SELECT {_COMPETITION} FROM {schema}.competitions "
        f"WHERE ($1::text IS NULL OR sport = $1) AND ($2::text IS NULL OR slug > $2) ORDER BY slug LIMIT $3",
        sport, after, limit,
    )


async def seasons(conn: asyncpg.Connection, schema: str, competition_slugs: Sequence[str]) -> list[asyncpg.Record]:
    """Seasons of the given competitions, newest first within each."""
    if not competition_slugs:
        return []
    return await conn.fetch(
        f"SELECT {_SEASON} FROM {schema}.seasons "
        f"WHERE competition = ANY($1::text[]) "
        f"ORDER BY competition, year DESC NULLS LAST, starts_on DESC NULLS LAST, label DESC",
        list(competition_slugs),
    )
