"""Writes one batch into a dataset schema: read models, tracking, topic seqs, projector state
and outbox, in ONE transaction, one statement per table (arrays through `unnest`).

The tracking upsert runs first and is the fence: it only moves a partition's offset from the
value this projector last saw, and only while `projection_meta.generation` is the one its state
was loaded from. Any mismatch (another writer, or a rebuilt schema swapped in) fails the batch
statement itself (`public.svc_projector_fence`), so nothing of the batch is written, and raises
`StaleState`.

A batch is usually that one statement on its own (autocommit): one round trip, where BEGIN, the
statement and COMMIT took three. The dataset's advisory lock, which a live batch must hold shared
while it commits (projections/locks.py), is then a session lock taken before the statement
(`SharedLock`): taken inside the statement it would come after the statement's snapshot and
after its table locks, and a rebuild's swap, which drops the old tables while it holds the lock
exclusively, would wait for the statement forever.
"""

from __future__ import annotations

import asyncio
import time

import asyncpg

from projections.batch import Batch
from projections.locks import projector_lock_key, seasons_lock_key
from projections.rows import TABLES, season_ids
from schemas.datasets import pg_schema
from schemas.read_model_tables import SEASON_KEY, SeasonProvenance, SeasonRecord
from schemas.read_models import column_list, columns


class StaleState(Exception):
    """Postgres moved on without us (swap of a rebuilt schema, or a second projector)."""


FENCE_SQLSTATE = "SVF01"  # raised by public.svc_projector_fence (global migration 0110)
# How long a writer that keeps writing holds the dataset's lock before it lets a waiting rebuild
# or verify in (they wait at most this, plus a batch, for the exclusive lock).
SHARED_LOCK_HOLD = 0.5


class SharedLock:
    """The dataset's advisory lock held shared by one connection's session across the batches of
    a busy spell, so that a batch needs no round trip of its own for it: taken before the first
    batch (`take`), released once the writer has nothing more to write (`release`), and
    released and taken again in one round trip every SHARED_LOCK_HOLD seconds while it keeps
    writing, which lets a waiting exclusive holder in first (Postgres grants a released lock to
    its waiters, and queues a new request behind them). A batch commits while the lock is held,
    so no batch commits while a rebuild or verify holds it exclusively, as with the lock per
    transaction. `key` None (a scratch schema): nothing to take."""

    def __init__(self, key: int | None) -> None:
        self.key = key
        self.conn: asyncpg.Connection | None = None  # whose session holds it
        self.since = 0.0

    async def take(self, conn: asyncpg.Connection) -> None:
        if self.key is None:
            return
        if self.conn is not None and self.conn is not conn:
            await self.release()
        if self.conn is None:
            await conn.execute(f"SELECT pg_advisory_lock_shared({self.key})")
        elif time.monotonic() - self.since >= SHARED_LOCK_HOLD:
            # one simple query: released (a waiter is granted it now), then queued behind the waiter
            await conn.execute(f"SELECT pg_advisory_unlock_shared({self.key}); SELECT pg_advisory_lock_shared({self.key})")
        else:
            return
        self.conn, self.since = conn, time.monotonic()

    async def release(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None and not conn.is_closed():  # a closed session released it
            await conn.execute(f"SELECT pg_advisory_unlock_shared({self.key})")


def _cast(column: str, pgtype: str) -> str:
    if pgtype == "jsonb":
        return f"u.{column}::jsonb"
    if pgtype == "text[]":
        return f"ARRAY(SELECT jsonb_array_elements_text(u.{column}::jsonb))"
    return f"u.{column}"


def _array_type(pgtype: str) -> str:
    return "text" if pgtype in ("jsonb", "text[]") else pgtype


def upsert_sql(schema: str, table: str, first: int = 1) -> str:
    """INSERT ... SELECT FROM unnest(arrays) ON CONFLICT DO UPDATE, parameters from `$first`."""
    columns, key = TABLES[table]
    names = [c for c, _ in columns]
    unnest = ", ".join(f"${i}::{_array_type(t)}[]" for i, (_, t) in enumerate(columns, first))
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


# tables written by the batch statement, in this order (news and seasons follow on their own:
# news is deleted and rewritten per player, seasons are computed from the games just written)
_TABLES = ("sports", "competitions", "teams", "games", "markets", "market_lines", "book_prices", "players",
           "injuries", "availability", "stat_lines", "reference_entries", "reference_revisions", "strategies",
           "strategy_revisions", "recipes", "recipe_revisions", "search_index", "topic_seq", "projector_state")


def _seasons_sql(s: str) -> str:
    """The seasons of a batch (`rows.season_ids`: id, competition, label, year, dates and their
    source), each as a SeasonRecord computed from the games it spans: their sources, the newest
    source and ingest times. The columns and the provenance's members are the models' fields."""
    utc = "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'"  # one fixed text form for every writer
    provenance = {"source": "source", "source_ts": f"to_char(as_of AT TIME ZONE 'UTC', {utc})",
                  "ingest_ts": f"to_char(ingest AT TIME ZONE 'UTC', {utc})", "dates_source": "dates_source"}
    if set(provenance) != set(SeasonProvenance.__struct_fields__):
        raise ValueError(f"the seasons statement writes {sorted(provenance)} of SeasonProvenance")
    names = [name for name, _ in columns(SeasonRecord)]
    built = ", ".join(f"'{k}', {provenance[k]}" for k in SeasonProvenance.__struct_fields__)
    return (
        f"INSERT INTO {s}.seasons AS t ({', '.join(names)}) "
        f"SELECT {column_list(SeasonRecord, computed={'provenance': f'jsonb_build_object({built})'})} FROM ("
        # the dates come from the sourced table (rows.season_ids), never from the games loaded
        "SELECT i.id, i.competition, i.label, i.year, i.starts_on, i.ends_on, i.dates_source, "
        "string_agg(DISTINCT g.source, ', ' ORDER BY g.source) AS source, max(g.as_of) AS as_of, "
        "max((g.provenance->>'ingest_ts')::timestamptz) AS ingest "
        "FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::date[], $6::date[], $7::text[]) "
        "AS i(id, competition, label, year, starts_on, ends_on, dates_source) "
        f"JOIN {s}.games g ON g.competition = i.competition AND g.season = i.label "
        "GROUP BY i.id, i.competition, i.label, i.year, i.starts_on, i.ends_on, i.dates_source) agg "
        f"ON CONFLICT ({', '.join(SEASON_KEY)}) DO UPDATE SET "
        + ", ".join(f"{n} = EXCLUDED.{n}" for n in names if n not in SEASON_KEY)
    )


def dataset_lock(schema: str, dataset: str) -> SharedLock:
    """Live batches hold the dataset's lock shared; a scratch schema being built is nobody
    else's business (and its builder holds that lock exclusively while it finishes)."""
    return SharedLock(projector_lock_key(dataset) if schema == pg_schema(dataset) else None)


class PgWriter:
    """Writes one batch per transaction: ONE statement whose data-modifying CTEs fence the
    tracking rows and upsert every table, on its own (autocommit); a batch that touched news or
    seasons needs a statement more for each, and so BEGIN and COMMIT around them. The caller
    holds the dataset's lock (`SharedLock.take`)."""

    def __init__(self, schema: str, dataset: str, epoch: str) -> None:
        self.schema = schema
        self.epoch = epoch
        # seasons are recomputed from the games table: under this lock (a statement of its own,
        # so the recomputation's snapshot is taken after it), a writer sees every other
        # writer's committed games, and the last to commit leaves the complete season
        self.seasons_lock = f"SELECT pg_advisory_xact_lock({seasons_lock_key(schema)})"
        s = f'"{schema}"'
        self.s = s
        self.delete_news_sql = f"DELETE FROM {s}.news WHERE player_id = ANY($1::text[])"
        self.news_sql = upsert_sql(schema, "news")
        self.seasons_sql = _seasons_sql(s)
        self._statements: dict[tuple, str] = {}

    def _statement(self, shape: tuple) -> str:
        """The batch statement for the set of tables that have rows (cached per shape)."""
        sql = self._statements.get(shape)
        if sql is not None:
            return sql
        s = self.s
        parts = [
            "trk_in AS (SELECT * FROM unnest($1::text[], $2::int[], $3::bigint[], $4::bigint[]) "
            "AS i(topic, partition, prev, last))",
            f"trk AS (INSERT INTO {s}.tracking AS t (topic, partition, last_offset, epoch) "
            f"SELECT topic, partition, last, $5 FROM trk_in WHERE (SELECT generation FROM {s}.projection_meta) = $6 "
            "ON CONFLICT (topic, partition) DO UPDATE SET last_offset = EXCLUDED.last_offset, epoch = EXCLUDED.epoch, "
            "committed_at = now() "
            "WHERE t.last_offset = (SELECT prev FROM trk_in i WHERE i.topic = t.topic AND i.partition = t.partition) "
            "RETURNING 1)",
        ]
        n = 7
        for table in shape:
            if table == "lines_deleted":
                parts.append(
                    f"del_lines AS (DELETE FROM {s}.market_lines WHERE (market_id, line_key) IN "
                    f"(SELECT * FROM unnest(${n}::text[], ${n + 1}::text[])))"
                )
                n += 2
            elif table == "search_deleted":
                # never a row the same statement upserts: a batch writes each key's final state
                parts.append(f"del_search AS (DELETE FROM {s}.search_index WHERE id = ANY(${n}::text[]))")
                n += 1
            elif table == "outbox":
                parts.append(
                    f"outbox AS (INSERT INTO {s}.outbox (wire_topic, seq, envelope) "
                    f"SELECT * FROM unnest(${n}::text[], ${n + 1}::bigint[], ${n + 2}::bytea[]))"
                )
                n += 3
            else:
                parts.append(f"w_{table} AS ({upsert_sql(self.schema, table, n)})")
                n += len(TABLES[table][0])
        sql = "WITH " + ", ".join(parts) + " SELECT public.svc_projector_fence(count(*), cardinality($1::text[])) FROM trk"
        self._statements[shape] = sql
        return sql

    async def write(self, conn: asyncpg.Connection, batch: Batch, generation: int,
                    sent: asyncio.Event | None = None) -> None:
        """`sent` is set just before the batch statement goes out (the bulk path folds the next
        batch while Postgres executes it)."""
        if batch.empty:
            return
        rows = batch.rows
        items = sorted(batch.tracking.items())
        args: list = [
            [tp[0] for tp, _ in items], [tp[1] for tp, _ in items], [p for _, (p, _) in items],
            [n for _, (_, n) in items], self.epoch, generation,
        ]
        shape = []
        for table in _TABLES:
            data = rows.rows[table]
            if data:
                shape.append(table)
                args.extend(list(col) for col in zip(*data))
        if rows.lines_deleted:
            shape.append("lines_deleted")
            args.extend(list(col) for col in zip(*rows.lines_deleted))
        if rows.search_deleted:
            shape.append("search_deleted")
            args.append(list(rows.search_deleted))
        if batch.envelopes:
            shape.append("outbox")
            args.extend(list(col) for col in zip(*batch.envelopes))
        alone = not rows.news_players and not rows.seasons
        if not alone:
            await conn.execute("BEGIN")
        try:
            statement = conn.fetchval(self._statement(tuple(shape)), *args)
            if sent is not None:
                sent.set()
            try:
                await statement
            except asyncpg.UniqueViolationError as exc:
                # another projector of the group committed these seqs first (both folded the
                # same records): this projector's state is behind, like a tracking row that moved
                raise StaleState(f"another writer committed {exc.detail or 'these deltas'} in {self.schema!r}") from exc
            except asyncpg.PostgresError as exc:
                if exc.sqlstate == FENCE_SQLSTATE:
                    raise StaleState(f"{self.schema!r}: {exc}") from exc
                raise
            if rows.news_players:
                await conn.execute(self.delete_news_sql, rows.news_players)
                if rows.rows["news"]:
                    await conn.execute(self.news_sql, *(list(col) for col in zip(*rows.rows["news"])))
            if rows.seasons:
                await conn.execute(self.seasons_lock)
                await conn.execute(self.seasons_sql, *(list(col) for col in zip(*season_ids(rows.seasons))))
            if not alone:
                await conn.execute("COMMIT")
        except BaseException:
            if not alone and not conn.is_closed():
                await conn.execute("ROLLBACK")
            raise

    async def warm_up(self, conn: asyncpg.Connection) -> None:
        """Have the connection learn every array type the batch statements use, so the first
        live batch does not pay for type introspection."""
        await conn.fetchval(
            "SELECT 1 FROM unnest($1::text[], $2::int[], $3::bigint[], $4::timestamptz[], $5::date[], "
            "$6::numeric[], $7::float8[], $8::boolean[], $9::bytea[]) LIMIT 1",
            [], [], [], [], [], [], [], [], [],
        )
