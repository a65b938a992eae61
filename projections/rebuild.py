"""Rebuild and verify: replay the log from offset 0 into a scratch schema, then swap it in or
compare it with the live read models.

Both first catch up without blocking the live projector, then take the dataset's advisory lock
exclusively (live batches hold it shared), replay the last few records up to exactly the offsets
the live schema holds, and then either swap schemas in one transaction (rebuild) or take a
snapshot of both and compare every row (verify). Rebuilds of the same log write no outbox:
the live run already published those deltas, and their seqs come out the same.

A log whose epoch differs from the read models' (a new embedded broker, recreated topics) is
rebuilt to its end with deltas published: nothing of the new log was projected yet.
"""

from __future__ import annotations

import logging
import os
import secrets
from dataclasses import dataclass, field

import asyncpg

from infra import channels
from infra.log_epoch import ensure_epoch
from infra.migrate import apply_dataset_ddl
from infra.settings import Settings
from projections.batch import TP
from projections.locks import projector_lock_key, scratch_lock_key
from projections.log_ends import log_end_offsets
from projections.pg_state import read_tracking
from projections.projector import DatasetProjector
from projections.replay import REBUILD_RECORDS, REBUILD_WRITE_EVERY, catch_up
from projections.replay_pool import ReplayPool, assign
from schemas.datasets import FEED_TOPICS, Dataset, pg_schema, topic_name

log = logging.getLogger("projections.rebuild")

# every table a rebuild must reproduce exactly (bookkeeping that legitimately differs, such as
# projection_meta.updated_at and the transient outbox, is left out)
COMPARED = (
    "sports", "competitions", "seasons", "teams", "games", "markets", "market_lines", "book_prices", "players",
    "injuries", "availability", "news", "stat_lines", "reference_entries", "reference_revisions", "strategies",
    "strategy_revisions", "recipes", "recipe_revisions", "search_index", "topic_seq", "projector_state",
)
CLOSE_ENOUGH = 2_000  # records left to replay when the exclusive lock is taken
SCRATCH_INFIX = "_build_"  # scratch schemas are named <dataset schema>_build_<random>
# whether this session holds an advisory lock on a bigint key (pg_locks splits it in two halves)
_HELD = (
    "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted "
    "AND objsubid = 1 AND ((classid::bigint << 32) | objid::bigint) = $1)"
)


async def stale_reason(conn: asyncpg.Connection, schema: str, epoch: str, ends: dict[TP, int],
                       tracking: dict[TP, tuple[int, str]] | None = None) -> str | None:
    """Why the schema's read models cannot continue on this log (None: they can). Pass
    `tracking` read before `ends` when a projector may be writing meanwhile."""
    row = await conn.fetchrow(f'SELECT epoch FROM "{schema}".projection_meta WHERE id = 1')
    if row is not None and row["epoch"] != epoch:
        return f"log epoch changed ({row['epoch']} -> {epoch})"
    if tracking is None:
        tracking = await read_tracking(conn, schema)
    for tp, (offset, tracked_epoch) in tracking.items():
        if tracked_epoch != epoch:
            return f"{tp[0]}[{tp[1]}] was tracked in epoch {tracked_epoch}, the log is {epoch}"
        if offset >= ends.get(tp, 0):
            return f"{tp[0]}[{tp[1]}] tracked offset {offset} is beyond the log's end {ends.get(tp, 0)}"
    return None


@dataclass
class Scratch:
    projector: DatasetProjector
    schema: str
    epoch: str


async def open_scratch(conn: asyncpg.Connection, settings: Settings, dataset: Dataset, *, publish: bool) -> Scratch:
    """A fresh scratch schema, held by this connection's session (see `drop_abandoned`)."""
    await drop_abandoned(conn, dataset)
    epoch = await ensure_epoch(settings, dataset)
    schema = f"{pg_schema(dataset)}{SCRATCH_INFIX}{secrets.token_hex(4)}"
    await conn.execute("SELECT pg_advisory_lock($1)", scratch_lock_key(schema))
    await apply_dataset_ddl(conn, schema)
    projector = DatasetProjector(settings, dataset, schema=schema, publish=publish, use_cache=False)
    await projector.open(conn, epoch)
    return Scratch(projector, schema, epoch)


def replay_workers(settings: Settings) -> int:
    if settings.replay_workers:
        return settings.replay_workers
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class ScratchReplay:
    """Catches a scratch schema up to given offsets, round after round: in this process, or,
    once a round has at least `replay_parallel_min` records to replay and there are several
    cores, by partition in worker processes (`replay_pool`) for the rest of the replay (their
    state is in the workers from then on)."""

    def __init__(self, scratch: Scratch, conn: asyncpg.Connection, settings: Settings) -> None:
        self.scratch = scratch
        self.conn = conn
        self.settings = settings
        self.pool: ReplayPool | None = None
        self.pool_sizes: list[int] = []  # partitions per worker, once a pool started
        self.pool_applied = 0  # records the workers applied

    @property
    def committed(self) -> dict[TP, int]:
        return self.scratch.projector.committed

    @property
    def applied(self) -> int:
        return self.scratch.projector.stats.applied + self.pool_applied

    async def to(self, targets: dict[TP, int] | None) -> None:
        """Up to `targets` (exclusive end offsets; None: the log's end now)."""
        projector = self.scratch.projector
        if targets is None:
            targets = await log_end_offsets(self.settings, projector.topics)
        if self.pool is None:
            await self._maybe_start_pool(targets)
        if self.pool is not None:
            self.pool_applied += await self.pool.catch_up(targets, projector.core.publish)
            projector.committed.update(self.pool.committed)
        else:
            await catch_up(projector, self.conn, targets=targets, batch_records=REBUILD_RECORDS,
                           write_every=REBUILD_WRITE_EVERY)

    async def _maybe_start_pool(self, targets: dict[TP, int]) -> None:
        projector, workers = self.scratch.projector, replay_workers(self.settings)
        remaining = {tp: max(0, end - projector.committed.get(tp, -1) - 1) for tp, end in targets.items()}
        if workers < 2 or sum(remaining.values()) < self.settings.replay_parallel_min:
            return
        if sum(1 for n in remaining.values() if n) < 2 or projector.committed:
            return  # one partition's worth, or state already folded here: stay in this process
        # every partition of the log gets an owner, also those with nothing to replay yet
        for tp in await log_end_offsets(self.settings, projector.topics):
            remaining.setdefault(tp, 0)
        groups = assign(remaining, workers)
        self.pool = await ReplayPool.start(self.settings, projector.dataset, self.scratch.schema,
                                           self.scratch.epoch, groups, REBUILD_RECORDS,
                                           REBUILD_WRITE_EVERY)
        self.pool_sizes = [len(g) for g in groups]

    async def close(self) -> None:
        if self.pool is not None:
            pool, self.pool = self.pool, None
            await pool.close()


async def drop_schema(conn: asyncpg.Connection, schema: str) -> None:
    """Drop a scratch schema (gone already after a swap renamed it) and release its key."""
    await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    if await conn.fetchval(_HELD, scratch_lock_key(schema)):
        await conn.execute("SELECT pg_advisory_unlock($1)", scratch_lock_key(schema))


async def drop_abandoned(conn: asyncpg.Connection, dataset: Dataset) -> list[str]:
    """Drop the dataset's scratch schemas whose builder is gone: a rebuild or verify killed
    midway leaves its schema behind, and its session, with the schema's key, ended with it.
    Schemas of builders still running keep their key and are left alone."""
    pattern = pg_schema(dataset) + SCRATCH_INFIX.replace("_", r"\_") + "%"
    dropped = []
    for name in await conn.fetchval("SELECT array_agg(nspname) FROM pg_namespace WHERE nspname LIKE $1",
                                    pattern) or ():
        key = scratch_lock_key(name)
        if await conn.fetchval(_HELD, key):
            continue  # this very session builds it (advisory locks are re-entrant)
        if await conn.fetchval("SELECT pg_try_advisory_lock($1)", key):
            try:
                await conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
            finally:
                await conn.execute("SELECT pg_advisory_unlock($1)", key)
            log.warning("dropped the scratch schema %s: its builder is gone", name)
            dropped.append(name)
    return dropped


async def _live_targets(conn: asyncpg.Connection, schema: str, epoch: str) -> dict[TP, int] | None:
    """Exclusive end offsets the live schema has applied, or None when it is on another log."""
    meta = await conn.fetchrow(f'SELECT epoch FROM "{schema}".projection_meta WHERE id = 1')
    if meta is not None and meta["epoch"] != epoch:
        return None
    return {tp: offset + 1 for tp, (offset, _) in (await read_tracking(conn, schema)).items()}


def _remaining(targets: dict[TP, int], done: dict[TP, int]) -> int:
    return sum(max(0, end - (done.get(tp, -1) + 1)) for tp, end in targets.items())


async def _catch_up_to_live(replay: ScratchReplay, conn: asyncpg.Connection, live: str) -> dict[TP, int] | None:
    """Replay toward the live schema's offsets until few are left (live keeps moving)."""
    targets = await _live_targets(conn, live, replay.scratch.epoch)
    for _ in range(10):
        if targets is None:
            return None
        await replay.to(targets)
        targets = await _live_targets(conn, live, replay.scratch.epoch)
        if targets is None or _remaining(targets, replay.committed) <= CLOSE_ENOUGH:
            break
    return targets


@dataclass
class RebuildResult:
    dataset: str
    records: int
    epoch_changed: bool
    generation: int
    notes: list[str] = field(default_factory=list)


async def rebuild(settings: Settings, dataset: Dataset, conn: asyncpg.Connection,
                  lock_conn: asyncpg.Connection, *, new_log: bool = False) -> RebuildResult:
    """Replay from offset 0 into fresh tables and swap them in as the dataset's schema.
    `new_log`: the live read models are known to be of another log (the projector found them
    stale at start), so replay this log to its end and publish its deltas."""
    live = pg_schema(dataset)
    scratch = await open_scratch(conn, settings, dataset, publish=False)
    replay = ScratchReplay(scratch, conn, settings)
    try:
        targets = None if new_log else await _catch_up_to_live(replay, conn, live)
        epoch_changed = targets is None
        await lock_conn.execute("SELECT pg_advisory_lock($1)", projector_lock_key(dataset))
        try:
            targets = None if new_log else await _live_targets(conn, live, scratch.epoch)
            if targets is None:
                # the live models are of another log: this log was never projected, so its
                # deltas go out too (seqs start again with the new log)
                epoch_changed = True
                scratch.projector.core.publish = True
                topics = [topic_name(dataset, b, settings.topic_namespace) for b in FEED_TOPICS]
                targets = await log_end_offsets(settings, topics)
            await replay.to(targets)
            await replay.close()
            generation = await swap(conn, dataset, scratch.schema, keep_outbox=not epoch_changed)
        finally:
            await lock_conn.execute("SELECT pg_advisory_unlock($1)", projector_lock_key(dataset))
    except BaseException:
        await replay.close()
        await drop_schema(conn, scratch.schema)
        raise
    return RebuildResult(dataset, replay.applied, epoch_changed, generation)


async def swap(conn: asyncpg.Connection, dataset: Dataset, scratch: str, keep_outbox: bool) -> int:
    """Make `scratch` the dataset's schema in one transaction; returns the new generation.
    Deltas still waiting in the live outbox move over, so the relay sends them from there."""
    live = pg_schema(dataset)
    retired = f"{live}_retired_{secrets.token_hex(4)}"
    async with conn.transaction():
        exists = await conn.fetchval("SELECT to_regnamespace($1) IS NOT NULL", live)
        generation = 0
        if exists:
            generation = await conn.fetchval(f'SELECT coalesce(max(generation), 0) FROM "{live}".projection_meta')
            if keep_outbox:
                await conn.execute(
                    f'INSERT INTO "{scratch}".outbox SELECT * FROM "{live}".outbox ON CONFLICT DO NOTHING'
                )
        await conn.execute(
            f'UPDATE "{scratch}".projection_meta SET generation = $1, updated_at = now()', generation + 1
        )
        if exists:
            await conn.execute(f'ALTER SCHEMA "{live}" RENAME TO "{retired}"')
        await conn.execute(f'ALTER SCHEMA "{scratch}" RENAME TO "{live}"')
        if exists:
            await conn.execute(f'DROP SCHEMA "{retired}" CASCADE')
        # every table is new: API processes drop what they built from the old ones (at commit)
        await conn.execute("SELECT pg_notify($1, $2)", channels.read_models(live), channels.ALL_TABLES)
    return generation + 1


# ---- verify -----------------------------------------------------------------------------------


@dataclass
class VerifyResult:
    dataset: str
    records: int
    differences: list[str]

    @property
    def identical(self) -> bool:
        return not self.differences


async def verify(settings: Settings, dataset: Dataset, conn: asyncpg.Connection, lock_conn: asyncpg.Connection,
                 snapshot_conn: asyncpg.Connection) -> VerifyResult:
    live = pg_schema(dataset)
    scratch = await open_scratch(conn, settings, dataset, publish=False)
    replay = ScratchReplay(scratch, conn, settings)
    try:
        targets = await _catch_up_to_live(replay, conn, live)
        if targets is None:
            return VerifyResult(dataset, 0, [f"{live}: read models are of another log epoch than the broker's"])
        await lock_conn.execute("SELECT pg_advisory_lock($1)", projector_lock_key(dataset))
        try:
            targets = await _live_targets(conn, live, scratch.epoch)
            await replay.to(targets)
            await replay.close()
            # a snapshot taken while no live batch can commit: both schemas at the same offsets
            await snapshot_conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            await snapshot_conn.fetchval("SELECT 1")
        finally:
            await lock_conn.execute("SELECT pg_advisory_unlock($1)", projector_lock_key(dataset))
        try:
            differences = await compare(snapshot_conn, live, scratch.schema)
        finally:
            await snapshot_conn.execute("ROLLBACK")
        return VerifyResult(dataset, replay.applied, differences)
    finally:
        await replay.close()
        await drop_schema(conn, scratch.schema)


async def compare(conn: asyncpg.Connection, live: str, rebuilt: str) -> list[str]:
    """Every row of every read model, and the tracked offsets, in both schemas."""
    differences = []
    for table in (*COMPARED, "tracking"):
        columns = "topic, partition, last_offset" if table == "tracking" else "*"
        only_live = await conn.fetchval(
            f'SELECT count(*) FROM (SELECT {columns} FROM "{live}".{table} EXCEPT ALL '
            f'SELECT {columns} FROM "{rebuilt}".{table}) d'
        )
        only_rebuilt = await conn.fetchval(
            f'SELECT count(*) FROM (SELECT {columns} FROM "{rebuilt}".{table} EXCEPT ALL '
            f'SELECT {columns} FROM "{live}".{table}) d'
        )
        if only_live or only_rebuilt:
            total = await conn.fetchval(f'SELECT count(*) FROM "{live}".{table}')
            differences.append(
                f"{table}: {only_live} of {total} live rows differ or are missing from the rebuild, "
                f"{only_rebuilt} rebuilt rows differ or are missing live"
            )
    return differences
