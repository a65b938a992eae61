"""Search: candidates by trigram similarity (pg_trgm) over the search index, ranked best match
first by `api.search_rank` (a whole name, nickname or alias before a typed prefix before a close
spelling; a matchup query matches games by both teams). Never ranked by a betting measure.
"""

from __future__ import annotations

from typing import Sequence

import asyncpg

from api.queries.sql import Where
from api.search_rank import rank_key, sides
from projections.search_terms import normalise
from schemas.read_model_tables import CompetitionRecord, PlayerRecord, SearchRecord, TeamRecord
from schemas.read_models import GameRecord, column_list

# what ranking reads of a candidate entry
_CANDIDATE = column_list(SearchRecord, "si.", only=("id", "kind", "name", "terms"))

# how close a query must be to a stretch of an entity's terms (pg_trgm word similarity, 0..1).
# Measured on the sample: one typo in a name scores 0.44 ("chefs") to 0.64 ("kanas city"),
# while a shared suffix alone scores 0.3 ("tottenham" against "durham"): 0.4 keeps the former out
# of the noise of the latter.
WORD_SIMILARITY_THRESHOLD = 0.4


# candidates ranked in Python (api.search_rank) per request: the best this many by trigram score,
# and every entity the query names as a whole phrase
CANDIDATES = 100
# among equally close candidates, the entities a person more likely means come first (a team
# before the hundred games whose names carry it)
_KIND_RANK = "CASE si.kind WHEN 'competition' THEN 0 WHEN 'team' THEN 1 WHEN 'player' THEN 2 WHEN 'game' THEN 3 ELSE 4 END"


async def search(
    conn: asyncpg.Connection, schema: str, *, q: str, kinds: Sequence[str] | None, competition: str | None,
    offset: int, limit: int,
) -> list[asyncpg.Record]:
    """A page of results, best first (api.search_rank): candidates from the trigram index, ranked
    in Python, then the page's rows with their context."""
    where = Where()
    placeholder = where.arg(q)
    found = [f"{placeholder} <% si.terms"]
    words = normalise(q)  # letters, digits and single spaces only: nothing LIKE would read as a pattern
    if words:
        # the whole phrase between spaces; the plain LIKE on `terms` (implied by it) is the part
        # the trigram index answers, so the OR below is an index scan and not a scan of the table
        found.append(
            f"(si.terms LIKE {where.arg(f'%{words}%')} AND (' ' || si.terms || ' ') LIKE {where.arg(f'% {words} %')})"
        )
    matchup = sides(q)
    if matchup is not None:
        a, b = where.arg(matchup[0]), where.arg(matchup[1])
        found.append(f"(si.kind = 'game' AND {a} <% si.terms AND {b} <% si.terms)")
    where.clauses.append("(" + " OR ".join(found) + ")")  # the first two indexable (GIN trigram)
    if kinds is not None:
        where.add("si.kind = ANY({}::text[])", list(kinds))
    if competition is not None:  # a slug or a cmp_ ID
        where.add(
            f"si.competition = coalesce((SELECT slug FROM {schema}.competitions WHERE id = {{}}), {{}})",
            competition, competition,
        )
    candidates_sql = (
        f"SELECT {_CANDIDATE} FROM {schema}.search_index si WHERE {where.sql()} "
        f"ORDER BY word_similarity({placeholder}, si.terms) DESC, {_KIND_RANK}, similarity({placeholder}, si.name) DESC, "
        f"si.id LIMIT {where.arg(max(CANDIDATES, offset + limit))}"
    )
    async with conn.transaction(readonly=True):
        # SET LOCAL: the threshold of the `<%` operator, for this transaction only; and the trigram
        # index for the candidates: the planner prices word_similarity as cheap and scans the
        # table, computing it for every row (13 ms on the sample, against 5 ms through the index).
        # Not for a query under three characters, which no trigram narrows (the scan is faster:
        # 26 against 35 ms for "a"); so the plan follows the setting, planned per execution (a
        # prepared statement's cached generic plan would keep whichever setting it was made under)
        use_index = len(words) >= 3
        await conn.execute(
            f"SET LOCAL pg_trgm.word_similarity_threshold = {WORD_SIMILARITY_THRESHOLD}; "
            f"SET LOCAL plan_cache_mode = force_custom_plan; SET LOCAL enable_seqscan = {'off' if use_index else 'on'}"
        )
        candidates = await conn.fetch(candidates_sql, *where.args)
        # the details query plans as usual
        await conn.execute("SET LOCAL enable_seqscan = on; SET LOCAL plan_cache_mode = auto")
        ranked = sorted(candidates, key=lambda r: rank_key(q, matchup, r["kind"], r["name"], r["terms"], r["id"]))
        page = [r["id"] for r in ranked[offset:offset + limit]]
        if not page:
            return []
        rows = await conn.fetch(_DETAILS.format(s=schema), page)
    by_id = {r["id"]: r for r in rows}
    return [by_id[i] for i in page if i in by_id]


# A game's context is read from its entry, which the projector writes with the game's row whenever
# what the entry holds of it changed (projections/rows.py): not from `games`, which every score
# and clock change rewrites, so that a kept search page (api/read_cache.py) is not built again
# for each of them. The entry holds those GameRecord fields under their own names, as JSON text:
# cast back to the column types. Each part below names the model it reads, so a column the
# model lacks is an error here and not a query that fails at the first search.
_GAME_CONTEXT = {"season": "text", "week": "int", "kickoff_at": "timestamptz"}
_DETAILS = (
    f"SELECT {column_list(SearchRecord, 'si.', only=('id', 'kind', 'name', 'context'))}, "
    f"{column_list(PlayerRecord, 'p.', only=('position', 'team_id'), as_prefix='player_')}, "
    f"{column_list(TeamRecord, 'pt.', only=('name',), as_prefix='player_team_')}, "
    f"{column_list(TeamRecord, 'gh.', only=('name',), as_prefix='game_home_')}, "
    f"{column_list(TeamRecord, 'ga.', only=('name',), as_prefix='game_away_')}, "
    + column_list(GameRecord, only=tuple(_GAME_CONTEXT), as_prefix="game_",
                  computed={f: f"(si.context->>'{f}')::{t}" for f, t in _GAME_CONTEXT.items()}) + ", "
    f"{column_list(TeamRecord, 't.', only=('competition', 'abbreviation'), as_prefix='team_')}, "
    f"{column_list(CompetitionRecord, 'c.', only=('sport',), as_prefix='competition_')}"
    """
    FROM {s}.search_index si
    LEFT JOIN {s}.players p ON si.kind = 'player' AND p.id = si.id
    LEFT JOIN {s}.teams pt ON pt.id = p.team_id
    LEFT JOIN {s}.teams gh ON si.kind = 'game' AND gh.id = si.context->>'home_team_id'
    LEFT JOIN {s}.teams ga ON si.kind = 'game' AND ga.id = si.context->>'away_team_id'
    LEFT JOIN {s}.teams t ON si.kind = 'team' AND t.id = si.id
    LEFT JOIN {s}.competitions c ON si.kind = 'competition' AND c.id = si.id
    WHERE si.id = ANY($1::text[])
"""
)
