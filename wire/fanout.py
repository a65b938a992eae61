"""Deltas from Kafka to the streams of one API process.

One consumer reads both datasets' `wire.deltas` from the log end (as of its start), hands each
delta to the subscriptions of its topic and keeps the last two minutes for resumes; a resume
this process did not see the deltas for reads them from the retained log (`wire.log_replay`). A
subscription that falls behind (its queue full) or a consumer that had to reconnect (deltas may
have been missed) is told to start over from a fresh snapshot; a stream never skips a seq.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from datetime import datetime

import msgspec
from aiokafka.errors import KafkaError

from infra.kafka import make_consumer
from infra.settings import Settings
from projections.log_ends import high_watermarks, partitions_of
from schemas.datasets import DATASETS, WIRE_DELTAS, topic_name
from wire.log_replay import LogReplay
from wire.recent import RecentDeltas

log = logging.getLogger("wire.fanout")
QUEUE_MAX = 2_000  # deltas a stream may have pending before it is a slow consumer
RECONNECT_SECONDS = 1.0
LOG_SCAN_SECONDS = 15.0  # a resume waits at most this long for the log (then a snapshot)
STOPPING = "stopping"  # an Inbox's restart reason when the process stops: close, never start over
REVOKED = "revoked"  # its key was revoked: close
FORBIDDEN = "forbidden"  # its key lost `wire:connect`: close
RESCOPED = "rescoped"  # its key's scopes changed: drop the topics it may no longer read, start the rest over
FINAL = frozenset({STOPPING, REVOKED, FORBIDDEN})  # reasons that close the connection; nothing overrides them


class _Data(msgspec.Struct, frozen=True):
    status: str | None = None  # a game's status (`game.state`); a market's own on market topics


class _Head(msgspec.Struct):
    type: str
    seq: int
    source_ts: datetime | None = None
    source: str = ""
    data: _Data = _Data()


_head = msgspec.json.Decoder(_Head)


@dataclass(frozen=True)
class Delta:
    seq: int
    type: str
    payload: bytes  # the envelope exactly as on the log
    source_ts: datetime | None = None
    source: str = ""
    status: str | None = None  # `data.status`


def delta_of(value: bytes) -> Delta | None:
    """A `wire.deltas` record value as a Delta; None when it does not decode."""
    try:
        head = _head.decode(value)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return Delta(head.seq, head.type, value, head.source_ts, head.source, head.data.status)


class Inbox:
    """Where one connection's deltas wait, `(topic, delta)` in arrival order; shared by all its
    topics. Full means the reader is too slow: everything pending is dropped and the connection
    told why (`restart`), to start over from snapshots; a reason in FINAL (the process is
    stopping, the key was revoked or lost `wire:connect`) closes the connection."""

    def __init__(self, size: int = QUEUE_MAX) -> None:
        self.queue: asyncio.Queue = asyncio.Queue(size)
        self.restart: str | None = None  # "slow_consumer", "reconnected", RESCOPED or one of FINAL
        self.scopes: frozenset[str] | None = None  # with RESCOPED: the key's scopes now

    def put(self, topic: str, delta: Delta) -> None:
        if self.restart is not None:
            return  # starting over anyway
        try:
            self.queue.put_nowait((topic, delta))
        except asyncio.QueueFull:
            self.start_over("slow_consumer")

    def start_over(self, why: str) -> None:
        if self.restart in FINAL:
            return  # the connection closes
        self.restart = why
        while not self.queue.empty():
            self.queue.get_nowait()
        self.queue.put_nowait(None)  # wakes the reader

    def take_restart(self) -> str | None:
        why, self.restart = self.restart, None
        return why


@dataclass(eq=False)
class Subscription:
    dataset: str
    topic: str
    inbox: Inbox = field(default_factory=Inbox)

    def offer(self, delta: Delta) -> None:
        self.inbox.put(self.topic, delta)


class DeltaFanout:
    def __init__(self, settings: Settings, clock=time.monotonic) -> None:
        self._settings = settings
        self._clock = clock
        self._datasets = {topic_name(ds, WIRE_DELTAS, settings.topic_namespace): ds for ds in DATASETS}
        self._subscriptions: dict[tuple[str, str], set[Subscription]] = {}
        self.recent = {ds: RecentDeltas(settings.wire_resume_seconds) for ds in DATASETS}
        self._task: asyncio.Task | None = None
        self._started = asyncio.Lock()
        self.log = LogReplay(settings, delta_of)

    async def start(self) -> None:
        """Connect and position at the log end; idempotent. Raises when the broker is unreachable."""
        async with self._started:
            if self._task is not None and not self._task.done():
                return
            consumer = await self._connect()
            self._task = asyncio.create_task(self._run(consumer), name="wire-fanout")

    async def _connect(self):
        consumer = make_consumer(self._settings, fetch_max_wait_ms=20, auto_offset_reset="latest")
        await consumer.start()
        try:
            tps = await partitions_of(consumer, list(self._datasets))
            ends = await high_watermarks(consumer, tps)  # exact on tansu too, unlike seek_to_end
            for tp in tps:  # deltas from this point on are delivered
                consumer.seek(tp, ends[(tp.topic, tp.partition)])
        except BaseException:
            await consumer.stop()
            raise
        return consumer

    async def _run(self, consumer) -> None:
        while True:
            try:
                while True:
                    batches = await consumer.getmany(timeout_ms=200, max_records=5_000)
                    now = self._clock()
                    for tp, records in batches.items():
                        dataset = self._datasets[tp.topic]
                        for record in records:
                            self._deliver(dataset, record.key, record.value, now)
            except asyncio.CancelledError:
                await consumer.stop()
                raise
            except (KafkaError, OSError) as exc:
                log.warning("wire fan-out lost the broker (%r); reconnecting", exc)
            try:
                await consumer.stop()
            except Exception:
                pass
            for subscriptions in self._subscriptions.values():
                for sub in subscriptions:
                    sub.inbox.start_over("reconnected")  # deltas may have been missed meanwhile
            while True:
                await asyncio.sleep(RECONNECT_SECONDS)
                try:
                    consumer = await self._connect()
                    break
                except (KafkaError, OSError) as exc:
                    log.warning("wire fan-out cannot reconnect yet: %r", exc)

    def _deliver(self, dataset: str, key: bytes | None, value: bytes | None, now: float) -> None:
        if key is None or value is None:
            return
        delta = delta_of(value)
        if delta is None:
            log.warning("undecodable delta on %s wire.deltas skipped", dataset)
            return
        topic = key.decode("utf-8", "replace")
        self.recent[dataset].add(topic, delta.seq, delta, now)
        for sub in self._subscriptions.get((dataset, topic), ()):
            sub.offer(delta)

    def subscribe(self, dataset: str, topic: str, inbox: Inbox | None = None) -> Subscription:
        sub = Subscription(dataset, topic, inbox or Inbox())
        self._subscriptions.setdefault((dataset, topic), set()).add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        subs = self._subscriptions.get((sub.dataset, sub.topic))
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del self._subscriptions[(sub.dataset, sub.topic)]

    def since(self, dataset: str, topic: str, last_seq: int) -> list[Delta] | None:
        """The deltas after `last_seq` from this process's memory (None: it cannot say)."""
        found = self.recent[dataset].since(topic, last_seq, self._clock())
        return None if found is None else [delta for _, delta in found]

    async def missed(self, dataset: str, last_seqs: dict[str, int]) -> dict[str, list[Delta] | None]:
        """Per topic, the deltas a resuming client missed after its last seq: from memory, else
        from the retained log (a client of another process, or of this one before it started);
        None: send a snapshot. Subscribe first, so nothing falls between this and live deltas."""
        out = {topic: self.since(dataset, topic, seq) for topic, seq in last_seqs.items()}
        unknown = {topic: last_seqs[topic] for topic, found in out.items() if found is None}
        if unknown:
            log_topic = next(name for name, ds in self._datasets.items() if ds == dataset)
            try:
                found = self.log.since(log_topic, unknown, self._settings.wire_resume_seconds)
                out.update(await asyncio.wait_for(found, LOG_SCAN_SECONDS))
            except (KafkaError, OSError, asyncio.TimeoutError) as exc:
                log.warning("resume from the log failed (%r); snapshots instead", exc)
        return out

    async def aclose(self) -> None:
        await self.log.aclose()
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):
                pass
            self._task = None
