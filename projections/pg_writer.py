"""Writes one batch into a dataset schema: read models, tracking, topic seqs, projector state
and outbox, in ONE transaction, one statement per table (arrays through `unnest`).

The tracking upsert runs first and is the fence: it only moves a partition's offset from the
value this projector last saw, and only while `projection_meta.generation` is the one its state
was loaded from. Any mismatch (another writer, or a rebuilt schema swapped in) raises
`StaleState` before anything else is written, and the transaction rolls back.
"""

from __future__ import annotations

import asyncpg

from projections.batch import Batch
from projections.locks import projector_lock_key
from projections.rows import TABLES, season_ids
from schemas.datasets import pg_schema


class StaleState(Exception):
    """Postgres moved on without us (swap of a rebuilt schema, or a second projector)."""


def _cast(column: str, pgtype: str) -> str:
    if pgtype == "jsonb":
        return f"u.{column}::jsonb"
    if pgtype == "text[]":
        return f"ARRAY(SELECT jsonb_array_elements_text(u.{column}::jsonb))"
    return f"u.{column}"


def _array_type(pgtype: str) -> str:
    return "text" if pgtype in ("jsonb", "text[]") else pgtype


def upsert_sql(schema: str, table: str) -> str:
    columns, key = TABLES[table]
    names = [c for c, _ in columns]
    unnest = ", ".join(f"${i}::{_array_type(t)}[]" for i, (_, t) in enumerate(columns, 1))
    select = ", ".join(_cast(c, t) for c, t in columns)
    updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in names if c not in key)
    sql = (
        f'INSERT INTO "{schema}".{table} AS t ({", ".join(names)}) '
        f'SELECT {select} FROM unnest({unnest}) AS u({", ".join(names)}) '
        f'ON CONFLICT ({", ".join(key)}) DO UPDATE SET {updates}'
    )
    if table in ("sports", "competitions"):
        sql += " WHERE EXCLUDED.input_key > t.input_key"  # newest input wins, whatever the order
    if table == "search_index":
        # a competition's entry is as of its newest input (commutative, like the competition)
        sql = sql.replace(
            "as_of = EXCLUDED.as_of",
            "as_of = CASE WHEN EXCLUDED.kind = 'competition' THEN GREATEST(t.as_of, EXCLUDED.as_of) "
            "ELSE EXCLUDED.as_of END",
        )
    return sql


class PgWriter:
    """Statements for one schema; `write` commits one batch."""

    def __init__(self, schema: str, dataset: str, epoch: str) -> None:
        self.schema = schema
        self.epoch = epoch
        # live batches hold the dataset's lock shared; a scratch schema being built is nobody
        # else's business (and its builder holds that lock exclusively while it finishes)
        self.lock_key = projector_lock_key(dataset) if schema == pg_schema(dataset) else None
        s = f'"{schema}"'
        self.upserts = {table: upsert_sql(schema, table) for table in TABLES}
        self.track_sql = (
            "WITH i AS (SELECT * FROM unnest($1::text[], $2::int[], $3::bigint[], $4::bigint[]) "
            "AS i(topic, partition, prev, last)) "
            f"INSERT INTO {s}.tracking AS t (topic, partition, last_offset, epoch) "
            f"SELECT topic, partition, last, $5 FROM i WHERE (SELECT generation FROM {s}.projection_meta) = $6 "
            "ON CONFLICT (topic, partition) DO UPDATE SET last_offset = EXCLUDED.last_offset, epoch = EXCLUDED.epoch "
            "WHERE t.last_offset = (SELECT prev FROM i WHERE i.topic = t.topic AND i.partition = t.partition) "
            "RETURNING t.topic"
        )
        self.delete_lines_sql = (
            f"DELETE FROM {s}.market_lines WHERE (market_id, line_key) IN "
            "(SELECT * FROM unnest($1::text[], $2::text[]))"
        )
        self.delete_news_sql = f"DELETE FROM {s}.news WHERE player_id = ANY($1::text[])"
        self.outbox_sql = (
            f"INSERT INTO {s}.outbox (wire_topic, seq, envelope) "
            "SELECT * FROM unnest($1::text[], $2::bigint[], $3::bytea[])"
        )
        self.seasons_sql = (
            f"INSERT INTO {s}.seasons AS t (id, competition, label, year, starts_on, ends_on, source, as_of) "
            "SELECT i.id, i.competition, i.label, i.year, "
            "min((g.kickoff_sort AT TIME ZONE coalesce(c.timezone, 'UTC'))::date), "
            "max((g.kickoff_sort AT TIME ZONE coalesce(c.timezone, 'UTC'))::date), "
            "string_agg(DISTINCT g.source, ', ' ORDER BY g.source), max(g.as_of) "
            "FROM unnest($1::text[], $2::text[], $3::text[], $4::int[]) AS i(id, competition, label, year) "
            f"JOIN {s}.games g ON g.competition = i.competition AND g.season = i.label "
            f"LEFT JOIN {s}.competitions c ON c.slug = i.competition "
            "GROUP BY i.id, i.competition, i.label, i.year, c.timezone "
            "ON CONFLICT (id) DO UPDATE SET year = EXCLUDED.year, starts_on = EXCLUDED.starts_on, "
            "ends_on = EXCLUDED.ends_on, source = EXCLUDED.source, as_of = EXCLUDED.as_of"
        )

    async def write(self, conn: asyncpg.Connection, batch: Batch, generation: int) -> None:
        if batch.empty:
            return
        async with conn.transaction():
            if self.lock_key is not None:
                await conn.execute("SELECT pg_advisory_xact_lock_shared($1)", self.lock_key)
            await self._track(conn, batch, generation)
            rows = batch.rows
            for table in ("sports", "competitions", "teams", "games", "markets", "market_lines", "book_prices",
                          "players", "injuries", "availability", "stat_lines", "search_index", "topic_seq",
                          "projector_state"):
                data = rows.rows[table]
                if data:
                    await conn.execute(self.upserts[table], *(list(col) for col in zip(*data)))
            if rows.lines_deleted:
                await conn.execute(self.delete_lines_sql, *(list(col) for col in zip(*rows.lines_deleted)))
            if rows.news_players:
                await conn.execute(self.delete_news_sql, rows.news_players)
                if rows.rows["news"]:
                    await conn.execute(self.upserts["news"], *(list(col) for col in zip(*rows.rows["news"])))
            if rows.seasons:
                await conn.execute(self.seasons_sql, *(list(col) for col in zip(*season_ids(rows.seasons))))
            if batch.envelopes:
                await conn.execute(self.outbox_sql, *(list(col) for col in zip(*batch.envelopes)))

    async def _track(self, conn: asyncpg.Connection, batch: Batch, generation: int) -> None:
        items = sorted(batch.tracking.items())
        topics = [tp[0] for tp, _ in items]
        partitions = [tp[1] for tp, _ in items]
        prev = [p for _, (p, _) in items]
        last = [n for _, (_, n) in items]
        moved = await conn.fetch(self.track_sql, topics, partitions, prev, last, self.epoch, generation)
        if len(moved) != len(items):
            raise StaleState(f"tracking in {self.schema!r} moved without this projector (or a new generation)")
