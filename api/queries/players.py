"""A player with their team, availability, current injury report and latest news: each read as its
record (schemas/read_model_tables.py), the team as the part of its record a player shows."""

from __future__ import annotations

import asyncpg

from schemas.read_model_tables import AvailabilityRecord, InjuryRecord, NewsRecord, PlayerRecord, TeamRecord
from schemas.read_models import column_list

# the team fields a player embeds (api.resources.common.team_ref), selected as team_<field>
TEAM_REF_FIELDS = ("name", "abbreviation", "competition", "provenance", "source", "as_of")
PLAYER_COLUMNS = f"{column_list(PlayerRecord, 'p.')}, {column_list(TeamRecord, 't.', only=TEAM_REF_FIELDS, as_prefix='team_')}"


async def get_player(conn: asyncpg.Connection, schema: str, player_id: str) -> asyncpg.Record | None:
    return await conn.fetchrow(
        f"SELECT {PLAYER_COLUMNS} FROM {schema}.players p LEFT JOIN {schema}.teams t ON t.id = p.team_id "
        f"WHERE p.id = $1",
        player_id,
    )


async def availability(conn: asyncpg.Connection, schema: str, player_id: str) -> list[asyncpg.Record]:
    return await conn.fetch(
        f"SELECT {column_list(AvailabilityRecord)} FROM {schema}.availability WHERE player_id = $1 ORDER BY source",
        player_id,
    )


async def injury(conn: asyncpg.Connection, schema: str, player_id: str) -> asyncpg.Record | None:
    return await conn.fetchrow(
        f"SELECT {column_list(InjuryRecord)} FROM {schema}.injuries WHERE player_id = $1",
        player_id,
    )


async def news(conn: asyncpg.Connection, schema: str, player_id: str) -> list[asyncpg.Record]:
    """Newest first, at most five."""
    return await conn.fetch(
        f"SELECT {column_list(NewsRecord)} FROM {schema}.news "
        f"WHERE player_id = $1 ORDER BY published_at DESC NULLS LAST, event_id DESC LIMIT 5",
        player_id,
    )
