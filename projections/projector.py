"""One dataset's projector: the batch core bound to a schema, its writer, cache and relay.

Every driver (faust agents, the aiokafka catch-up, rebuild) calls `apply(records)`. A batch is
folded, written in one transaction and only then handed to the cache and the relay. If the
write fails the fold is undone exactly; if Postgres moved on without us (a rebuilt schema was
swapped in, or a second projector wrote) the state is reloaded from Postgres and the records
are folded again against it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from datetime import datetime, timezone
from typing import Sequence

import asyncpg

from infra.settings import Settings
from projections.assemble import assemble
from projections.batch import TP, Batch, BatchCore, Fold, Record
from projections.cache import StateCache, cache_path, watermark
from projections.pg_state import ensure_meta, read_parts, read_tracking
from projections.pg_writer import PgWriter, StaleState, dataset_lock
from projections.state import GameState
from schemas.datasets import FEED_TOPICS, Dataset, pg_schema, topic_name

log = logging.getLogger("projections.projector")


class Stats:
    def __init__(self) -> None:
        self.batches = 0
        self.applied = 0
        self.deltas = 0
        self.bad = 0
        self.reloads = 0
        self.loaded_from = ""
        self.load_seconds = 0.0


def _quotes_of(states) -> list[tuple[str, str, str, object]]:
    return [
        (m.market_id, key, book, quote)
        for state in states.values() if isinstance(state, GameState)
        for m in state.markets.values() for key, line in m.lines.items() for book, quote in line.books.items()
    ]


def _snapshot(conn: asyncpg.Connection):
    """A read-only repeatable-read transaction (one snapshot for every read in it); inside a
    transaction the caller already holds, that transaction."""
    if conn.is_in_transaction():
        return contextlib.nullcontext()
    return conn.transaction(isolation="repeatable_read", readonly=True)


class DatasetProjector:
    def __init__(self, settings: Settings, dataset: Dataset, *, schema: str | None = None, publish: bool = True,
                 use_cache: bool = True) -> None:
        self.settings = settings
        self.dataset = dataset
        self.schema = schema or pg_schema(dataset)
        self.topics = [topic_name(dataset, base, settings.topic_namespace) for base in FEED_TOPICS]
        self.core = BatchCore(settings.consensus_window_seconds * 1_000_000, publish)
        self.cache = StateCache(cache_path(settings.data_dir, dataset)) if use_cache else None
        self.lock = asyncio.Lock()
        self.committed: dict[TP, int] = {}  # tracking as Postgres holds it
        self.epoch = ""
        self.generation = 0
        self.writer: PgWriter | None = None
        self.shared = dataset_lock(self.schema, dataset)  # held shared while batches commit
        self.relay = None  # OutboxRelay, when deltas are published
        self.stats = Stats()

    async def open(self, conn: asyncpg.Connection, epoch: str) -> None:
        """Bind to the schema (a fresh one takes `epoch`) and load the working state."""
        self.epoch, self.generation = await ensure_meta(conn, self.schema, epoch)
        self.writer = PgWriter(self.schema, self.dataset, self.epoch)
        await self.writer.warm_up(conn)
        await self.load(conn)

    async def load(self, conn: asyncpg.Connection) -> None:
        started = time.monotonic()
        # meta, tracking and state in one snapshot: another projector of the group may commit
        # between these reads (scale-out), and state read after its commit with tracking read
        # before would fold its records twice, or meet quotes of a market whose state it has not
        # read (a KeyError in `assemble`)
        async with _snapshot(conn):
            row = await conn.fetchrow(f'SELECT epoch, generation FROM "{self.schema}".projection_meta WHERE id = 1')
            tracking = {tp: offset for tp, (offset, _) in (await read_tracking(conn, self.schema)).items()}
            mark = watermark(self.schema, row["epoch"], row["generation"], tracking)
            cached = self.cache is not None and self.cache.watermark() == mark
            if not cached:
                parts, rows = await read_parts(conn, self.schema)
        self.epoch, self.generation = row["epoch"], row["generation"]
        self.writer = PgWriter(self.schema, self.dataset, self.epoch)
        if cached:
            parts, quotes = self.cache.load()
            self.stats.loaded_from = "cache"
        else:
            states = assemble(parts, rows, self.core.window_us)
            if self.cache is not None:
                self.cache.replace_all(parts, _quotes_of(states), mark)
            self.stats.loaded_from = "postgres"
        if self.stats.loaded_from == "cache":
            states = assemble(parts, quotes, self.core.window_us)
        self.core.reset(states, tracking)
        self.committed = dict(tracking)
        self.stats.load_seconds = time.monotonic() - started
        log.info("%s: state of %d keys loaded from %s in %.2fs", self.schema, len(self.core.states),
                 self.stats.loaded_from, self.stats.load_seconds)

    def fold(self, records: Sequence[Record]) -> Batch:
        return self.core.fold(records, datetime.now(timezone.utc))

    def close_fold(self, fold: Fold) -> Batch:
        return self.core.close(fold, datetime.now(timezone.utc))

    async def write(self, conn: asyncpg.Connection, batch: Batch, undo: bool = True,
                    sent: asyncio.Event | None = None, hold: bool = False) -> None:
        """Commit a folded batch, then update cache and relay. Undoes the fold on failure
        (`undo=False`: the caller undoes, as a pipeline must, newest fold first). `hold`: keep
        the dataset's lock for the next batch (the caller calls `release` once it has none)."""
        try:
            if not batch.empty:  # nothing to commit otherwise (PgWriter.write)
                await self.shared.take(conn)
            await self.writer.write(conn, batch, self.generation, sent)
        except BaseException:
            if undo:
                self.core.rollback(batch)
            if not hold:
                with contextlib.suppress(Exception):  # the batch's own failure is the one to raise
                    await self.release()
            raise
        self.committed_batch(batch)
        if not hold:
            await self.release()

    async def release(self) -> None:
        """Let go of the dataset's lock (held after `hold` writes); a no-op when not held."""
        await self.shared.release()

    async def apply(self, conn: asyncpg.Connection, records: Sequence[Record], hold: bool = False) -> Batch:
        async with self.lock:
            for attempt in range(3):
                batch = self.fold(records)
                if batch.empty:
                    return batch
                try:
                    await self.write(conn, batch, hold=hold)
                    return batch
                except StaleState as exc:
                    log.warning("%s: %s; reloading state from Postgres", self.schema, exc)
                    self.stats.reloads += 1
                    await self.load(conn)
            raise StaleState(f"{self.schema}: gave up after three reloads")

    def committed_batch(self, batch: Batch) -> None:
        for tp, (_, last) in batch.tracking.items():
            self.committed[tp] = last
        s = self.stats
        s.batches += 1
        s.applied += batch.applied
        s.deltas += batch.delta_count
        s.bad += len(batch.bad)
        for tp, offset, reason in batch.bad:
            log.error("%s: record %s[%d]@%d is not a canonical event, skipped: %s", self.schema, tp[0], tp[1],
                      offset, reason)
        if self.cache is not None:
            mark = watermark(self.schema, self.epoch, self.generation, self.committed)
            self.cache.write(batch.rows.rows["projector_state"], batch.rows.quotes, mark)
        if self.relay is not None:
            self.relay.notify(batch.envelopes)

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()
