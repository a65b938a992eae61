"""Search: trigram similarity (pg_trgm) over the search index, best match first.

Matching uses word similarity (the query against the closest stretch of an entity's terms),
so a misspelt word ("Mahomse", "Kanas City") still finds the entity; ties go to the entity
whose whole name is closest, then to registry order. Never ranked by a betting measure.
"""

from __future__ import annotations

from typing import Sequence

import asyncpg

from api.queries.sql import Where

# how close a query must be to a stretch of an entity's terms (pg_trgm word similarity, 0..1).
# Measured on the sample: one typo in a name scores 0.44 ("chefs") to 0.64 ("kanas city"),
# while a shared suffix alone scores 0.3 ("tottenham" against "durham"): 0.4 keeps the former out
# of the noise of the latter.
WORD_SIMILARITY_THRESHOLD = 0.4
_KIND_RANK = "CASE si.kind WHEN 'competition' THEN 0 WHEN 'team' THEN 1 WHEN 'player' THEN 2 WHEN 'game' THEN 3 ELSE 4 END"


async def search(
    conn: asyncpg.Connection, schema: str, *, q: str, kinds: Sequence[str] | None, competition: str | None,
    offset: int, limit: int,
) -> list[asyncpg.Record]:
    where = Where()
    placeholder = where.arg(q)
    where.clauses.append(f"{placeholder} <% si.terms")  # indexable: GIN trigram index on terms
    if kinds is not None:
        where.add("si.kind = ANY({}::text[])", list(kinds))
    if competition is not None:  # a slug or a cmp_ ID
        where.add(
            f"si.competition = coalesce((SELECT slug FROM {schema}.competitions WHERE id = {{}}), {{}})",
            competition, competition,
        )
    sql = f"""
        WITH hits AS (
            SELECT si.id, si.kind, si.name, si.context,
                   word_similarity({placeholder}, si.terms) AS word_score,
                   similarity({placeholder}, si.name) AS name_score,
                   {_KIND_RANK} AS kind_rank
            FROM {schema}.search_index si
            WHERE {where.sql()}
            ORDER BY word_score DESC, name_score DESC, kind_rank, si.name, si.id
            OFFSET {where.arg(offset)} LIMIT {where.arg(limit)}
        )
        SELECT hits.id, hits.kind, hits.name, hits.context,
               p.position AS player_position, pt.name AS player_team, p.team_id AS player_team_id,
               gh.name AS game_home, ga.name AS game_away, g.season AS game_season, g.week AS game_week,
               g.kickoff_at AS game_kickoff_at,
               t.competition AS team_competition, t.abbreviation AS team_abbreviation,
               c.sport AS competition_sport
        FROM hits
        LEFT JOIN {schema}.players p ON hits.kind = 'player' AND p.id = hits.id
        LEFT JOIN {schema}.teams pt ON pt.id = p.team_id
        LEFT JOIN {schema}.games g ON hits.kind = 'game' AND g.id = hits.id
        LEFT JOIN {schema}.teams gh ON gh.id = g.home_team_id
        LEFT JOIN {schema}.teams ga ON ga.id = g.away_team_id
        LEFT JOIN {schema}.teams t ON hits.kind = 'team' AND t.id = hits.id
        LEFT JOIN {schema}.competitions c ON hits.kind = 'competition' AND c.id = hits.id
        ORDER BY hits.word_score DESC, hits.name_score DESC, hits.kind_rank, hits.name, hits.id
    """
    async with conn.transaction(readonly=True):
        # SET LOCAL: the threshold of the `<%` operator, for this transaction only
        await conn.execute(f"SET LOCAL pg_trgm.word_similarity_threshold = {WORD_SIMILARITY_THRESHOLD}")
        return await conn.fetch(sql, *where.args)
