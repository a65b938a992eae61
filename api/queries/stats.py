"""Stat lines: a game's box scores and a player's season and latest-game lines."""

from __future__ import annotations

import asyncpg

from schemas.read_models import StatLineRecord, column_list

# a stat line as its record (schemas.read_models.StatLineRecord)
STAT_COLUMNS = column_list(StatLineRecord)


async def player_box_scores(conn: asyncpg.Connection, schema: str, game_id: str) -> list[asyncpg.Record]:
    return await conn.fetch(
        f"SELECT {STAT_COLUMNS} FROM {schema}.stat_lines WHERE game_id = $1 AND subject_id LIKE 'plr\\_%' "
        f"ORDER BY team_id NULLS LAST, subject_id, source, line_key",
        game_id,
    )


# a team line summed from its players' lines, in the record's shape: the fields not named here
# are the summed row's columns of the same name
_SUMMED_COLUMNS = column_list(StatLineRecord, computed={
    "line_key": "team_id || '|game|' || $1 || '|' || source || '|summed'",
    "subject_id": "team_id",
    "game_id": "$1",
    "basis": "'total'",
    "provenance": (
        "jsonb_build_object('source', source, "
        "'source_ts', to_char(source_ts AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), "
        "'ingest_ts', to_char(ingest_ts AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'))"
    ),
})


async def team_box_scores(conn: asyncpg.Connection, schema: str, game_id: str) -> list[asyncpg.Record]:
    """Team lines the projector wrote for the game; for a team without one, the sum of its
    players' lines over the stats that are whole numbers on every line (counting stats such
    as yards and touchdowns; rates and decimal measures do not add up and are left out), with
    the players' provenance times (the source's, or null, and our ingest time)."""
    return await conn.fetch(
        f"""
        WITH stored AS (
            SELECT {STAT_COLUMNS} FROM {schema}.stat_lines
            WHERE game_id = $1 AND subject_id LIKE 'tm\\_%'
        ), player_lines AS (
            SELECT team_id, season, week, season_type, source, as_of, stats, provenance FROM {schema}.stat_lines
            WHERE game_id = $1 AND subject_id LIKE 'plr\\_%' AND team_id IS NOT NULL
              AND team_id NOT IN (SELECT subject_id FROM stored)
        ), per_key AS (
            SELECT p.team_id, p.source, kv.key, round(sum((kv.value #>> '{{}}')::numeric)) AS total
            FROM player_lines p CROSS JOIN LATERAL jsonb_each(p.stats) kv
            GROUP BY p.team_id, p.source, kv.key
            HAVING bool_and(jsonb_typeof(kv.value) = 'number' AND (kv.value #>> '{{}}')::numeric % 1 = 0)
        ), summed AS (
            SELECT p.team_id, p.source, max(p.season) AS season, max(p.week) AS week,
                   max(p.season_type) AS season_type,
                   max(p.as_of) AS as_of,
                   -- the players' own times: the newest the source stated (null when it states none),
                   -- and when we read the newest of them; never an invented instant
                   max((p.provenance->>'source_ts')::timestamptz) AS source_ts,
                   max((p.provenance->>'ingest_ts')::timestamptz) AS ingest_ts,
                   coalesce((SELECT jsonb_object_agg(k.key, k.total) FROM per_key k
                             WHERE k.team_id = p.team_id AND k.source = p.source), '{{}}'::jsonb) AS stats
            FROM player_lines p GROUP BY p.team_id, p.source
        )
        SELECT {STAT_COLUMNS} FROM stored
        UNION ALL
        SELECT {_SUMMED_COLUMNS} FROM summed
        ORDER BY subject_id, source
        """,
        game_id,
    )


async def season_lines(conn: asyncpg.Connection, schema: str, subject_id: str) -> list[asyncpg.Record]:
    return await conn.fetch(
        f"SELECT {STAT_COLUMNS} FROM {schema}.stat_lines WHERE subject_id = $1 AND game_id IS NULL AND stats <> '{{}}'::jsonb "
        f"ORDER BY season DESC NULLS LAST, season_type NULLS LAST, basis NULLS LAST, source, line_key",
        subject_id,
    )


async def latest_game_lines(conn: asyncpg.Connection, schema: str, subject_id: str) -> list[asyncpg.Record]:
    """The lines of the subject's latest game (by kickoff), one per source."""
    return await conn.fetch(
        f"""
        WITH latest AS (
            SELECT s.game_id FROM {schema}.stat_lines s LEFT JOIN {schema}.games g ON g.id = s.game_id
            WHERE s.subject_id = $1 AND s.game_id IS NOT NULL
            ORDER BY g.kickoff_sort DESC NULLS LAST, s.season DESC NULLS LAST, s.week DESC NULLS LAST, s.game_id
            LIMIT 1
        )
        SELECT {STAT_COLUMNS} FROM {schema}.stat_lines
        WHERE subject_id = $1 AND game_id = (SELECT game_id FROM latest)
        ORDER BY source, line_key
        """,
        subject_id,
    )
