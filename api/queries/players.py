"""A player with their team, availability, current injury report and latest news."""

from __future__ import annotations

import asyncpg


async def get_player(conn: asyncpg.Connection, schema: str, player_id: str) -> asyncpg.Record | None:
    return await conn.fetchrow(
        f"""
        SELECT p.id, p.sport, p.competition, p.name, p.position, p.team_id, p.source, p.as_of, p.provenance,
               t.name AS team_name, t.abbreviation AS team_abbreviation, t.competition AS team_competition,
               t.provenance AS team_provenance, t.source AS team_source, t.as_of AS team_as_of
        FROM {schema}.players p LEFT JOIN {schema}.teams t ON t.id = p.team_id
        WHERE p.id = $1
        """,
        player_id,
    )


async def availability(conn: asyncpg.Connection, schema: str, player_id: str) -> list[asyncpg.Record]:
    return await conn.fetch(
        f"SELECT status, game_id, season, week, source, as_of, provenance FROM {schema}.availability "
        f"WHERE player_id = $1 ORDER BY source",
        player_id,
    )


async def injury(conn: asyncpg.Connection, schema: str, player_id: str) -> asyncpg.Record | None:
    return await conn.fetchrow(
        f"SELECT status, roster_status, detail, practice, game_day, season, week, reported_at, source, as_of, "
        f"provenance FROM {schema}.injuries WHERE player_id = $1",
        player_id,
    )


async def news(conn: asyncpg.Connection, schema: str, player_id: str) -> list[asyncpg.Record]:
    """Newest first, at most five."""
    return await conn.fetch(
        f"SELECT kind, headline, published_at, source, as_of, provenance FROM {schema}.news "
        f"WHERE player_id = $1 ORDER BY published_at DESC NULLS LAST, event_id DESC LIMIT 5",
        player_id,
    )
