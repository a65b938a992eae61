"""The bulk path: read a dataset's feed topics with a plain aiokafka consumer (manual
assignment, `getmany`) through the same batch core as the faust agents.

faust's per-event machinery tops out near 10-15k events/s here, raw `getmany` near 300k/s, so
catch-up after a restart, epoch rebuilds and `svc projections rebuild|verify` all come this way.
Folding batch N+1 overlaps Postgres executing batch N's statement (on the other core); if a
write fails, both folds are undone, newest first.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from contextlib import contextmanager

import asyncpg
from infra.kafka import make_consumer, started
from projections.batch import TP, Batch, Fold
from infra.aiokafka_adapter import partitions_of
from projections.log_ends import high_watermarks
from projections.pg_writer import StaleState
from projections.projector import DatasetProjector

log = logging.getLogger("projections.replay")
BATCH_RECORDS = 20_000  # catch-up (SVC_CATCH_UP_BATCH): the event loop stays responsive (faust joins meanwhile)
# `at_head` is set once the records not yet folded are at most this many: the faust agents
# (`take_events` batches of 2,000, per-event stream machinery) take over from there. Handed
# over earlier, they would work off a restart's backlog at a fraction of this path's rate.
NEAR_HEAD = 2_000
# Scratch rebuilds fold REBUILD_RECORDS at a time and write every REBUILD_WRITE_EVERY records:
# each write rewrites every row of every key it touched, and a season log touches every key all
# the time, so fewer writes are less work for Postgres and for the folding process alike.
# Measured on a season log (docs/benchmarks.md): 100,000 at a time, each written, replayed at
# 62,000-71,000 events/s; 20,000 at a time written every 250,000, at 113,000-127,000.
REBUILD_RECORDS = 20_000
REBUILD_WRITE_EVERY = 250_000
# A fold allocates millions of objects, almost all freed by reference counting; the survivors
# are the new working state, which the cyclic collector would then scan again and again (it
# holds no cycles: immutable trees). While a catch-up runs: no collections during a fold, its
# survivors frozen after it (out of every later scan), collections only between folds and
# rare (threshold raised); at the end the frozen state is handed back to the collector.
# Measured: 15-25% of a replay's fold. Catch-ups of both datasets may overlap, hence the count.
CATCH_UP_GC_THRESHOLD = 100_000
_gc = {"running": 0, "saved": gc.get_threshold()}


@contextmanager
def _rare_collections():
    if _gc["running"] == 0:
        _gc["saved"] = saved = gc.get_threshold()
        gc.set_threshold(max(saved[0], CATCH_UP_GC_THRESHOLD), *saved[1:])
    _gc["running"] += 1
    try:
        yield
    finally:
        _gc["running"] -= 1
        if _gc["running"] == 0:
            gc.set_threshold(*_gc["saved"])
            gc.unfreeze()


@contextmanager
def _folding():
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


async def catch_up(
    projector: DatasetProjector,
    conn: asyncpg.Connection,
    *,
    targets: dict[TP, int] | None = None,
    stop: asyncio.Event | None = None,
    follow: bool = False,
    batch_records: int = BATCH_RECORDS,
    at_head: asyncio.Event | None = None,
    write_every: int | None = None,
) -> int:
    """Apply records from the tracked offsets up to `targets` (exclusive end offsets; default:
    the end offsets when called). `follow`: keep reading new records until `stop` is set, and
    set `at_head` once within `NEAR_HEAD` records of the log end. Records are fetched and
    folded `batch_records` at a time; each fold is written, or, with `write_every` (not while
    following), folds are written together once they hold that many records or the targets are
    reached. Returns the number of records applied."""
    applied = 0
    done = False
    try:
        while True:
            try:
                async with projector.lock:
                    with _rare_collections():
                        applied += await _run(projector, conn, targets, stop, follow, batch_records, at_head,
                                               write_every)
                done = True
                return applied
            except StaleState as exc:
                log.warning("%s: %s; reloading state and resuming", projector.schema, exc)
                projector.stats.reloads += 1
                async with projector.lock:
                    await projector.load(conn)
    finally:
        # the batches kept the dataset's lock from one to the next (`hold`): let go of it
        async with projector.lock:
            if done:
                await projector.release()
            else:
                with contextlib.suppress(Exception):  # the run's own failure is the one to raise
                    await projector.release()


def _behind(consumer, tps, tracking: dict[TP, int], taken: int) -> int | None:
    """Records past what was folded, `taken` (fetched, about to be folded) aside, by the high
    watermarks of the last fetches (None while a partition has not answered a fetch yet)."""
    total = -taken
    for tp in tps:
        mark = consumer.highwater(tp)
        if mark is None:
            return None
        total += max(0, mark - tracking.get((tp.topic, tp.partition), -1) - 1)
    return total


async def _run(projector, conn, targets, stop, follow, batch_records, at_head, write_every) -> int:
    async with started(make_consumer(projector.settings, fetch_max_wait_ms=100)) as consumer:
        return await _read_and_fold(consumer, projector, conn, targets, stop, follow, batch_records, at_head,
                                    write_every)


async def _read_and_fold(consumer, projector, conn, targets, stop, follow, batch_records, at_head, write_every) -> int:
    """`_run`'s reading and folding with its consumer started (and stopped after this returns)."""
    pending: tuple[Batch, asyncio.Task] | None = None
    fold: Fold | None = None  # folded, not yet closed into a batch
    applied = 0

    async def write_out() -> None:
        """Close the open fold, wait for the previous batch's write, start this one's."""
        nonlocal pending, applied, fold
        closing, fold = fold, None  # closed from here on: no longer an open fold to roll back
        with _folding():
            batch = projector.close_fold(closing)
        if pending is not None:
            previous, pending = pending, None
            await _finish(projector, previous, newer=batch)
        if not batch.empty:
            applied += batch.applied
            sent = asyncio.Event()
            task = asyncio.ensure_future(projector.write(conn, batch, undo=False, sent=sent, hold=True))
            pending = (batch, task)
            # let the write put its statement on the wire before the next fold takes the loop
            await asyncio.wait([task, asyncio.ensure_future(sent.wait())], return_when=asyncio.FIRST_COMPLETED)
            await asyncio.sleep(0)

    try:
        tps = await partitions_of(consumer, projector.topics)
        ends = await high_watermarks(consumer, tps)
        # never wait for offsets the log does not have (yet)
        limit = ends if targets is None else {tp: min(end, ends.get(tp, 0)) for tp, end in targets.items()}
        active = {}
        for tp in tps:
            key = (tp.topic, tp.partition)
            start = projector.committed.get(key, -1) + 1
            if follow or start < limit.get(key, 0):
                active[tp] = start
        if not active:
            return 0
        consumer.assign(list(active))
        for tp, start in active.items():
            consumer.seek(tp, start)
        while active and not (stop is not None and stop.is_set()):
            records = []
            while len(records) < batch_records and active:
                # wait for the first records only; then take what is already fetched
                data = await consumer.getmany(timeout_ms=0 if records else 100,
                                              max_records=batch_records - len(records))
                if not data:
                    break
                for tp, chunk in data.items():
                    if not follow:
                        end = limit.get((tp.topic, tp.partition), 0)
                        chunk = [r for r in chunk if r.offset < end]
                        if not chunk or chunk[-1].offset + 1 >= end:
                            active.pop(tp, None)
                            consumer.pause(tp)
                    records.extend(chunk)
            if at_head is not None and not at_head.is_set():
                # by the high watermarks of the fetches (an empty first round proves nothing)
                behind = _behind(consumer, active, projector.core.tracking, len(records))
                if behind is not None and behind <= NEAR_HEAD:
                    at_head.set()
            if not records:
                if not follow:
                    # nothing fetched: partitions whose position reached the limit are done
                    for tp in list(active):
                        if await consumer.position(tp) >= limit.get((tp.topic, tp.partition), 0):
                            active.pop(tp)
                continue
            if fold is None:
                fold = Fold()
            with _folding():
                projector.core.feed(fold, records)  # Postgres runs the previous batch's statement meanwhile
            if follow or write_every is None or fold.applied >= write_every or not active:
                await write_out()
        if fold is not None:  # stopped, or the last partitions ended on an empty fetch
            await write_out()
        if pending is not None:
            previous, pending = pending, None
            await _finish(projector, previous, newer=None)
        return applied
    finally:
        if fold is not None:  # interrupted mid-batch: undo what was folded since the last write
            projector.core.rollback(fold)
        if pending is not None:  # interrupted: let the write settle, keep state consistent
            try:
                await _finish(projector, pending, newer=None)
            except BaseException:
                pass


async def _finish(projector: DatasetProjector, pending: tuple[Batch, asyncio.Task], newer: Batch | None) -> None:
    batch, task = pending
    try:
        await task
    except BaseException:
        if newer is not None:
            projector.core.rollback(newer)
        projector.core.rollback(batch)
        raise
