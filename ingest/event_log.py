"""A dataset's feed log as ingest sees it: append what the log does not hold yet.

`open_event_log` wires the parts one run needs: the topics (created if missing), the log's
epoch, a Postgres connection (migrations applied), the registry of appended events (first
brought up to date with what a run that died left in the log: `ingest/reconcile.py`) and the
producer. Every command that writes feed events goes through it.

The log must stay the one the run started on: before each batch is sent and after it is
acknowledged (before it is recorded as appended) the epoch is confirmed (`EpochWatch`). A
broker replaced by one with a new log (the embedded broker restarted) stops the run with
`EpochChanged`; running it again resumes. At most the batch in flight when the broker was
replaced can reach the new log as well as the next run's copy (the projector drops the
repeat by `event_id`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timezone

import asyncpg
import msgspec

from infra.db import connect
from infra.kafka import started
from infra.log_epoch import EpochWatch, ensure_epoch
from infra.migrate import migrate
from infra.settings import Settings
from infra.topics import ensure_topics
from ingest.appended import AppendedRegistry
from ingest.producer import FeedProducer
from ingest.reconcile import close_run, reconcile
from ingest.registry import PgResolver
from schemas.datasets import Dataset
from schemas.deadletter import DeadLetter, encode_deadletter
from schemas.events import AnyEvent, encode, event_key, event_topic

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


@dataclass
class EventLog:
    dataset: Dataset
    epoch: str
    conn: asyncpg.Connection
    appended: AppendedRegistry
    producer: FeedProducer
    resolver: PgResolver
    watch: EpochWatch
    appended_records: int = 0  # records this run appended and recorded (ingest/reconcile.py)
    # the same registry on a connection of its own: a run records one batch there while it
    # looks up and sends the next (ingest/pipeline.py); None: `appended` records
    recorder: AppendedRegistry | None = None
    ingest_worker: bool | None = None  # Settings.ingest_worker: whether runs fork a worker (ingest/worker.py)

    async def append(self, events: Sequence[AnyEvent], dead_letters: Sequence[DeadLetter] = ()) -> tuple[int, int]:
        """Send the events this log does not hold yet, and the dead letters it has not had yet;
        returns (accepted, duplicate) events once the broker acknowledged and they are recorded."""
        return await (await self.start(events, dead_letters)).finish()

    async def start(self, events: Sequence[AnyEvent], dead_letters: Sequence[DeadLetter] = (),
                    values: Sequence[bytes] | None = None) -> Appending:
        """The first half of `append`: look up what the log holds and hand the rest to the
        producer. The caller may prepare its next batch before calling `finish()`. `values`:
        the events already encoded (`stamp_encoded`), in the same order."""
        if values is None:
            values = [encode(e) for e in events]
        records = [(event_topic(e), event_key(e).encode(), v) for e, v in zip(events, values)]
        return await self.start_encoded([e.event_id for e in events], records, dead_letters)

    async def start_encoded(self, event_ids: Sequence[str], records: Sequence[tuple[str, bytes, bytes]],
                            dead_letters: Sequence[DeadLetter] = ()) -> Appending:
        """`start` for events already keyed and encoded: their IDs and (base topic, key, value)
        records, in the same order (ingest/batches.py `Built.keyed`).

        The epoch is confirmed while the registry is asked (two round trips at once, to the
        broker and to Postgres), whether or not anything is sent: a confirmation that began
        after an earlier batch's acknowledgements also says those came from this log, so a run
        (ingest/pipeline.py) records that batch on the strength of this one (`Appending.record`)."""
        letter_ids = [dead_letter_id(d) for d in dead_letters]
        looked_up = asyncio.ensure_future(self.appended.known([*event_ids, *letter_ids]))
        try:
            await self.watch.confirm()
        except BaseException:
            looked_up.cancel()
            with contextlib.suppress(BaseException):
                await looked_up
            raise
        known = await looked_up
        if known:
            kept = [(i, r) for i, r in zip(event_ids, records) if i not in known]
            new_ids, new = [i for i, _ in kept], [r for _, r in kept]
        else:
            new_ids, new = list(event_ids), list(records)
        letters = [(i, d) for i, d in zip(letter_ids, dead_letters) if i not in known]
        acks = await self.producer.enqueue_encoded(new, [d for _, d in letters])
        recorded = new_ids + [i for i, _ in letters]
        return Appending(self, acks, recorded, len(new), len(event_ids) - len(new))

    async def send_raw(self, records: Sequence[tuple[str, bytes, bytes]], event_ids: Sequence[str]) -> None:
        """Already encoded (base topic, key, value) records (replay keeps the bytes it read):
        sent, acknowledged, confirmed on this log's epoch, then recorded as appended."""
        if not records:
            return
        await self.watch.confirm()
        await self.producer.send_raw(records)
        await self.watch.confirm()
        await self.appended.record(event_ids)
        self.appended_records += len(records)


@dataclass
class Appending:
    """A batch handed to the producer: recorded as appended once the broker acknowledged it."""

    log: EventLog
    acks: list[asyncio.Future]
    ids: list[str]
    accepted: int
    duplicate: int

    async def finish(self) -> tuple[int, int]:
        await self.acknowledged()
        if self.acks:
            await self.log.watch.confirm()  # acknowledged by the log this run started on, not a new one
        return await self.record()

    async def acknowledged(self) -> None:
        """The first half of `finish`: every record acknowledged (by some broker: confirm the
        epoch after this returns, before `record()`)."""
        if self.acks:
            await asyncio.gather(*self.acks)

    async def record(self) -> tuple[int, int]:
        """The second half of `finish`, once acknowledged and the epoch confirmed since: the
        batch recorded as appended."""
        await (self.log.recorder or self.log.appended).record(self.ids)
        self.log.appended_records += len(self.ids)
        return self.accepted, self.duplicate


def dead_letter_id(letter: DeadLetter) -> str:
    """A dead letter's identity: the same bad record of the same file is rejected once per log."""
    bare = msgspec.structs.replace(letter, ingest_ts=_EPOCH)
    return "dl_" + hashlib.blake2b(encode_deadletter(bare), digest_size=16).hexdigest()


@asynccontextmanager
async def open_event_log(settings: Settings, dataset: Dataset) -> AsyncIterator[EventLog]:
    await ensure_topics(settings)
    epoch = await ensure_epoch(settings, dataset)
    # three connections: the identity registry resolves a batch while the registry of appended
    # events looks up the one being sent and records (on its own) the one acknowledged before
    conn = await connect(settings.require_database())
    try:
        await migrate(conn)
        appended_conn = await connect(settings.require_database())
        record_conn: asyncpg.Connection | None = None
        producer = FeedProducer(settings, dataset)
        watch = EpochWatch(settings, dataset, epoch)
        try:
            record_conn = await connect(settings.require_database())
            appended = await AppendedRegistry.for_log(appended_conn, dataset, epoch)
            # what a run that died appended and did not record: recorded now, never sent twice
            marks = await reconcile(settings, dataset, appended)
            async with started(producer), started(watch):
                log = EventLog(dataset, epoch, conn, appended, producer, PgResolver(conn, dataset), watch,
                               recorder=AppendedRegistry(record_conn, appended.log_id),
                               ingest_worker=settings.ingest_worker)
                yield log
                await close_run(settings, dataset, appended, marks, log.appended_records)
        finally:
            if record_conn is not None:
                await record_conn.close()
            await appended_conn.close()
    finally:
        await conn.close()
