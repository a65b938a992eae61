"""The reference library's read model: published entries by topic order or by relevance.

Relevance (`q`): Postgres full-text search over the entry's document (title and aliases weigh
most, then the summary, then the body), any of the query's words counting, plus pg_trgm word
similarity of the query to the title and aliases, so close spellings ("viggg", "kely") still
find their entry. Never ranked by a betting measure.
"""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from api.queries.sql import Where
from projections.search_terms import normalise
from schemas.library import KINDS
from schemas.read_model_tables import ReferenceEntryRecord
from schemas.read_models import column_list

# how close a misspelt query must be to a stretch of the title and aliases (pg_trgm word
# similarity, 0..1) to count without a full-text match; tuned on tests/relevance/queries.toml
WORD_SIMILARITY_THRESHOLD = 0.5
# a trigram match counts this much against a full-text rank (ts_rank with weights A=1, B=0.4,
# C=0.2 is typically 0.1 to 1 for a good hit)
TRIGRAM_WEIGHT = 1.0
# the query naming the entry itself (its slug, as words) breaks near-ties: "push" is the term
# before the rules about pushes
NAME_WEIGHT = 0.5
KIND_RANK = "array_position(ARRAY[{}]::text[], e.kind)".format(", ".join(f"'{k}'" for k in KINDS))

# every column of the entry's record but its status (only published entries are read), its
# history count and search terms, and `related`, which `_related` selects published entries of
COLUMNS = column_list(ReferenceEntryRecord, "e.", only=[
    name for name in ReferenceEntryRecord.__struct_fields__ if name not in ("status", "related", "revision", "terms")])


def _related(schema: str) -> str:
    """Related entries that are published (a link a client sees opens something)."""
    return (f"ARRAY(SELECT r FROM unnest(e.related) WITH ORDINALITY AS u(r, n) JOIN {schema}.reference_entries x "
            "ON x.id = u.r AND x.status = 'published' ORDER BY u.n) AS related")


def _filters(where: Where, kind: str | None, jurisdiction: str | None, product: str | None,
             operator: str | None) -> None:
    where.clauses.append("e.status = 'published'")
    if kind is not None:
        where.add("e.kind = {}", kind)
    if jurisdiction is not None:
        country = jurisdiction[:2]
        if "-" in jurisdiction:  # a subdivision: its own entries and its country's
            where.add("e.jurisdictions && ARRAY[{}, {}]::text[]", jurisdiction, country)
        else:  # a country: its entries and its subdivisions'
            where.add("EXISTS (SELECT 1 FROM unnest(e.jurisdictions) j WHERE j = {} OR j LIKE {})",
                      country, country + "-%")
    if product is not None:
        where.add("{} = ANY(e.products)", product)
    if operator is not None:
        where.add("{} = ANY(e.operators)", operator)


async def topic_page(
    conn: asyncpg.Connection, schema: str, *, kind: str | None, jurisdiction: str | None, product: str | None,
    operator: str | None, after: tuple[int, str, str] | None, limit: int,
) -> list[asyncpg.Record]:
    """Published entries in topic order: kind (term, rule, law, tax, policy, guide, help), title, ID."""
    where = Where()
    _filters(where, kind, jurisdiction, product, operator)
    if after is not None:
        where.add(f"({KIND_RANK}, e.title, e.id) > ({{}}::int, {{}}::text, {{}}::text)", *after)
    sql = (f"SELECT {COLUMNS}, {_related(schema)}, {KIND_RANK} AS kind_rank FROM {schema}.reference_entries e "
           f"WHERE {where.sql()} ORDER BY kind_rank, e.title, e.id LIMIT {where.arg(limit)}")
    return await conn.fetch(sql, *where.args)


async def relevance_page(
    conn: asyncpg.Connection, schema: str, *, q: str, kind: str | None, jurisdiction: str | None,
    product: str | None, operator: str | None, offset: int, limit: int,
) -> list[asyncpg.Record]:
    """Published entries matching `q`, best first (then topic order)."""
    where = Where()
    text = where.arg(q)
    terms = where.arg(normalise(q))
    # any of the query's words: plainto_tsquery's lexemes joined by OR (a question in words
    # rarely has every word in one entry); an entry with more of them ranks higher
    tsquery = f"replace(plainto_tsquery('english', {text})::text, ' & ', ' | ')::tsquery"
    _filters(where, kind, jurisdiction, product, operator)
    sql = f"""
        WITH q AS (SELECT {tsquery} AS any_word, plainto_tsquery('english', {text}) AS every_word)
        SELECT {COLUMNS}, {_related(schema)}, score
        FROM (
            SELECT e.*, ts_rank(e.document, q.any_word) + ts_rank(e.document, q.every_word)
                        + {TRIGRAM_WEIGHT} * word_similarity({terms}, e.terms)
                        + {NAME_WEIGHT} * similarity({terms}, replace(e.slug, '-', ' ')) AS score,
                   {KIND_RANK} AS kind_rank
            FROM {schema}.reference_entries e, q
            WHERE {where.sql()} AND (e.document @@ q.any_word OR {terms} <% e.terms)
        ) e
        ORDER BY score DESC, kind_rank, e.title, e.id
        OFFSET {where.arg(offset)} LIMIT {where.arg(limit)}
    """
    async with conn.transaction(readonly=True):
        # SET LOCAL, for this transaction only: the threshold of the `<%` operator, and the GIN
        # indexes (full text, trigrams) over a scan: a few hundred rows look cheap to scan, but
        # word similarity against every entry's title and aliases costs ~15 ms, the indexes < 1 ms
        await conn.execute(f"SET LOCAL pg_trgm.word_similarity_threshold = {WORD_SIMILARITY_THRESHOLD}; "
                           "SET LOCAL enable_seqscan = off")
        return await conn.fetch(sql, *where.args)


async def get_entry(conn: asyncpg.Connection, schema: str, topic_id: str) -> asyncpg.Record | None:
    """A published entry by `ref_` ID or slug."""
    column = "id" if topic_id.startswith("ref_") else "slug"
    return await conn.fetchrow(
        f"SELECT {COLUMNS}, {_related(schema)} FROM {schema}.reference_entries e "
        f"WHERE e.{column} = $1 AND e.status = 'published'",
        topic_id,
    )


async def published_slugs(conn: asyncpg.Connection, schema: str, slugs: Sequence[str]) -> set[str]:
    rows = await conn.fetch(
        f"SELECT slug FROM {schema}.reference_entries WHERE slug = ANY($1::text[]) AND status = 'published'",
        list(slugs),
    )
    return {r["slug"] for r in rows}
