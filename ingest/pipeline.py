"""One ingest run: a parsed file through resolution, stamping and the log, batch by batch.

Per batch: resolve its claims (registry), build and stamp its events, drop the ones this run
already produced, append the rest (one lookup of what the log holds, gathered sends, one
insert of what the broker acknowledged) together with the batch's dead letters. A batch is
acknowledged while the next one is resolved and built, and recorded as appended (on a
connection of its own) while the next one is looked up and sent: a run used to wait for the
acknowledgement, an epoch confirmation, the recording, the lookup and a second confirmation
one after the other before each send (most of a run's time on the bench file). The one
confirmation between two sends, made while the lookup runs, serves both batches: the earlier
one's acknowledgements came from the log this run started on, and the next one goes there.
Every batch is acknowledged (and counted, `progress` told) before the next is sent, so
batches go out in order and per-entity order holds; they are recorded in order too. A run
that dies with a batch acknowledged and not recorded leaves it to the next run's reconcile
(ingest/reconcile.py), as before. A large file is parsed and built in a worker process meanwhile (ingest/worker.py):
the same batches, in the same order, resolved here by a task of their own (`_read_worker`) as
the worker asks, so the worker does not wait on the run's acknowledgements.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import re
import time
from collections.abc import AsyncGenerator, Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone

from ingest import worker
from ingest.batches import Prepared, RunState, batched, prepare
from ingest.event_log import Appending, EventLog
from ingest.records import Parsed, Rejected
from ingest.summary import Summary
from schemas.deadletter import DeadLetter, make_dead_letter

Progress = Callable[[Summary], None]


def dead_letter(parsed: Parsed, r: Rejected, ingest_ts: datetime) -> DeadLetter:
    return make_dead_letter(source=parsed.source, file=parsed.file, location=r.location, reason=r.reason, raw=r.raw,
                            ingest_ts=ingest_ts)


def reason_kind(reason: str) -> str:
    """A reason with its particulars folded, to count dead letters by kind."""
    folded = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", reason)
    folded = re.sub(r"\([^)]*\)", "(…)", folded)
    return re.sub(r"[-+]?\d+(?:\.\d+)?", "N", folded)


def _count(result: tuple[int, int], summary: Summary, progress: Progress | None) -> None:
    accepted, duplicate = result
    summary.accepted += accepted
    summary.duplicate += duplicate
    if progress:
        progress(summary)


@contextmanager
def fewer_collections(threshold: int = 100_000) -> Iterator[None]:
    """A run allocates millions of short-lived objects (events, outcomes, futures) that
    reference counting frees; at the default threshold (700 allocations) the cyclic collector
    rescans the live batch thousands of times, a third of a run's CPU. Raised for the run."""
    old = gc.get_threshold()
    gc.set_threshold(threshold, *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)


async def ingest(parsed: Parsed, log: EventLog, progress: Progress | None = None) -> Summary:
    with fewer_collections():
        return await _ingest(parsed, log, progress)


async def _ingest(parsed: Parsed, log: EventLog, progress: Progress | None) -> Summary:
    started = time.perf_counter()
    ingest_ts = datetime.now(timezone.utc)
    summary = Summary()
    # the batch sent last: acknowledged while the next one is resolved and built
    sent: Appending | None = None
    acking: asyncio.Task | None = None
    # the batch before it: recorded as appended (log.recorder, a connection of its own) while the
    # next is looked up and sent; batches are recorded one at a time, in order
    recording: asyncio.Task | None = None
    # closed on the way out, whatever happens: a worker process is stopped with its batches
    batches = _prepared(parsed, log)

    async def record(acknowledged: Appending) -> None:
        nonlocal recording
        if recording is not None:
            await recording
        recording = asyncio.create_task(acknowledged.record())

    try:
        async for prepared in batches:
            dead = [dead_letter(parsed, r, ingest_ts) for r in prepared.rejected]
            acked = None
            if acking is not None:
                await acking
                acking, acked = None, sent
                _count((acked.accepted, acked.duplicate), summary, progress)
            # the epoch is confirmed in here, after `acked` was acknowledged: the acknowledgements
            # came from the log this run started on, so it is recorded once this returns
            sent = await log.start_encoded(prepared.event_ids, prepared.records, dead)
            if acked is not None:
                await record(acked)
            acking = asyncio.create_task(sent.acknowledged())
            summary.records = prepared.records_read
            summary.dead_lettered += len(dead)
            summary.events += len(prepared.event_ids)
            summary.by_type.update(prepared.types)
            summary.reasons.update(reason_kind(r.reason) for r in prepared.rejected)
        if acking is not None:
            await acking
            acking = None
            _count((sent.accepted, sent.duplicate), summary, progress)
        if recording is not None:
            await recording
            recording = None
        if sent is not None:
            await sent.finish()  # the last batch: its epoch confirmed, then recorded, after the others
    finally:
        if acking is not None:  # the run failed: do not leave the batch's task behind
            acking.cancel()
        if recording is not None and not recording.done():
            # the run failed with a batch acknowledged and confirmed: recorded all the same
            with contextlib.suppress(Exception):
                await recording
        await batches.aclose()
    summary.seconds = time.perf_counter() - started
    summary.events_per_second = round(summary.events / summary.seconds, 1) if summary.seconds else 0.0
    return summary


async def _prepared(parsed: Parsed, log: EventLog) -> AsyncGenerator[Prepared, None]:
    """The run's batches, built, in file order: in a worker process for a large file
    (ingest/worker.py), else here."""
    if not worker.wanted(parsed.total, log.ingest_worker):
        state = RunState()
        for batch in batched(parsed.items):
            yield prepare(batch, await log.resolver.resolve(batch.records), state)
        return
    child = await worker.ParseWorker.start(parsed.items)
    built: asyncio.Queue[Prepared | BaseException | None] = asyncio.Queue(maxsize=BUILT_AHEAD)
    reader = asyncio.create_task(_read_worker(child, log, built))
    try:
        while (item := await built.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        reader.cancel()
        try:
            await reader
        except asyncio.CancelledError:
            pass
        child.close()


# Built batches read from the worker ahead of the one being appended. The worker builds a
# batch only once its claims are resolved, and it used to wait for that while the run awaited
# the previous batch's acknowledgements (claims were read only between appends); now a task
# of their own reads the worker's messages and resolves claims as they come, and at most this
# many built batches (~11 MB each at full size) wait here for their turn.
BUILT_AHEAD = 2


async def _read_worker(child: worker.ParseWorker, log: EventLog,
                       built: asyncio.Queue[Prepared | BaseException | None]) -> None:
    """The worker's messages in order: claims resolved (in file order, before their batch is
    built), built batches queued, None at the end; a failure is queued for the run to raise."""
    try:
        while True:
            message = await child.next()
            if message[0] == "claims":
                child.resolved(await log.resolver.resolve([worker.claims_record(*message[1:])]))
            elif message[0] == "built":
                await built.put(message[1])
            else:  # "end"
                await built.put(None)
                return
    except Exception as exc:  # noqa: BLE001 - raised by the run, in its own task
        await built.put(exc)
