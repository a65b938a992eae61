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
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from datetime import datetime, timezone

import msgspec
from aiokafka.errors import KafkaError

from infra.aiokafka_adapter import partitions_of
from infra.kafka import make_consumer, wait_for_new_ms
from infra.settings import Settings
from projections.log_ends import high_watermarks
from schemas.datasets import DATASETS, WIRE_DELTAS, topic_name
from domain.game_status import served_status
from wire import sse
from wire.log_replay import LogReplay
from wire.recent import RecentDeltas

log = logging.getLogger("wire.fanout")
QUEUE_MAX = 5_000  # a connection's send queue: deltas (SVC_WIRE_SEND_QUEUE_MESSAGES) ...
QUEUE_BYTES = 8 * 1024 * 1024  # ... and their bytes (SVC_WIRE_SEND_QUEUE_BYTES)
BEHIND_FACTOR = 4  # a queue this many times its bounds, its reader not to blame: start over quietly
TURN_SECONDS = 0.01  # LoopTurns: at most one turn counted per this long (an idle loop is not spun)
FREE_TURNS = 2  # a write that completes within this many turns was not held back by its reader
STUCK_TURNS = 50  # a write pending this many turns: its reader has stopped reading
BATCH_RECORDS = 500  # deltas read at once ...
HAND_OVER = 50  # ... and handed to the connections this many at a time: senders that keep up drain between
RECONNECT_SECONDS = 1.0
LOG_SCAN_SECONDS = 15.0  # a resume waits at most this long for the log (then a snapshot)
STOPPING = "stopping"  # an Inbox's restart reason when the process stops: close, never start over
REVOKED = "revoked"  # its key was revoked: close
FORBIDDEN = "forbidden"  # its key lost `wire:connect`: close
RESCOPED = "rescoped"  # its key's scopes changed: drop the topics it may no longer read, start the rest over
BEHIND = "behind"  # its queue grew past BEHIND_FACTOR x its bounds while its own writes kept draining: start over
FINAL = frozenset({STOPPING, REVOKED, FORBIDDEN})  # reasons that close the connection; nothing overrides them
# An idle connection's empty send queue: shared, immutable. A deque is 768 bytes even when empty
# (one block of 64 slots), and most of an idle socket's queue's life is empty, so an Inbox holds a
# deque only while something is pending (docs/benchmarks.md, "Wire fan-out: what an idle socket holds").
_EMPTY: tuple = ()


class _Data(msgspec.Struct, frozen=True):
    status: str | None = None  # a game's status (`game.state`); a market's own on market topics
    kickoff_at: datetime | None = None  # a game's (`game.state`)
    kickoff_date: str | None = None


class _Head(msgspec.Struct):
    type: str
    seq: int
    topic: str = ""
    source_ts: datetime | None = None
    source: str = ""
    data: _Data = _Data()


_head = msgspec.json.Decoder(_Head)


@dataclass(frozen=True)
class Delta:
    seq: int
    type: str
    payload: bytes  # the envelope as on the log (a game's status as served: `served_delta`)
    source_ts: datetime | None = None
    source: str = ""
    status: str | None = None  # `data.status`
    topic: str = ""  # the envelope's; an Inbox holds only Delta references, so it says whose

    def on(self, topic: str) -> Delta:
        """This delta as one of `topic` (itself when it already says so)."""
        return self if self.topic == topic else replace(self, topic=topic)

    # One delta reaches hundreds of sockets: what a socket sends is made once per delta, on first
    # use, and shared by reference (never per connection).
    @cached_property
    def text(self) -> str:
        """The envelope as the text of a WebSocket frame."""
        return self.payload.decode()

    @cached_property
    def sse_event(self) -> bytes:
        """The delta as a server-sent event."""
        return sse.event(self.payload, name=self.type, event_id=self.seq)

    @cached_property
    def ws_event(self) -> dict:
        """The ASGI `websocket.send` event of this delta's frame; servers and middleware only read it."""
        return {"type": "websocket.send", "bytes": None, "text": self.text}


def delta_of(value: bytes) -> Delta | None:
    """A `wire.deltas` record value as a Delta; None when it does not decode."""
    try:
        head = _head.decode(value)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    status = head.data.status
    if head.type == "game.state" and status is not None:
        served = served_status(status, head.data.kickoff_at, head.data.kickoff_date, datetime.now(timezone.utc))
        if served != status:
            value, status = served_delta(value, served), served
    return Delta(head.seq, head.type, value, head.source_ts, head.source, status, head.topic)


def served_delta(value: bytes, status: str) -> bytes:
    """A `game.state` delta with the game's status as served (domain.game_status): the projector
    writes what the sources said, which for a game whose start has passed with no report is
    `scheduled`, where REST and the snapshot say `result_unknown`. Rare (a schedule or a state
    without a report arriving after kickoff), so the envelope is simply re-encoded."""
    envelope = msgspec.json.decode(value)
    envelope["data"]["status"] = status
    return msgspec.json.encode(envelope)


class LoopTurns:
    """Turns of the running event loop, counted while any connection is writing: a timer that
    re-arms itself every TURN_SECONDS, so it counts one per loop turn when turns are long (the
    process is busy) and one per TURN_SECONDS when they are short (it is not spun when idle).

    This is the clock a connection's own writes are judged by. A write the reader drains completes
    within a turn or two however busy the process is (a server completes a write from its own
    thread, and the writer resumes at the loop's next turn); a write the reader does not drain
    stays pending for many turns. Seconds cannot tell the two apart: when the loop is behind,
    every write takes long."""

    def __init__(self) -> None:
        self.count = 0
        self.writers = 0
        self._timer: asyncio.TimerHandle | None = None

    def hold(self) -> int:
        """A write begins: the turn it began at."""
        self.writers += 1
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(TURN_SECONDS, self._tick)
        return self.count

    def release(self) -> None:
        self.writers -= 1

    def _tick(self) -> None:
        self.count += 1
        self._timer = asyncio.get_running_loop().call_later(TURN_SECONDS, self._tick) if self.writers else None


_turns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopTurns] = weakref.WeakKeyDictionary()


def loop_turns() -> LoopTurns:
    """The running loop's LoopTurns (one per loop: every connection of the process shares it)."""
    loop = asyncio.get_running_loop()
    turns = _turns.get(loop)
    if turns is None:
        turns = _turns[loop] = LoopTurns()
    return turns


class Inbox:
    """One connection's send queue: its deltas waiting to be sent, in arrival order, shared by all
    its topics (each Delta says its topic), bounded by messages and bytes.

    It holds references only (the fan-out's one Delta per record), and wakes its reader once per
    turn of the loop however many deltas arrived meanwhile: the reader takes all that is pending
    (`pending`/`take`) and sends it in one go, rather than being woken once per delta.

    Slow is judged on the connection's own writes, never on the process's backlog: the writer says
    when each write to its client begins and ends (`writing`/`written`), and a write pending longer
    than FREE_TURNS turns of the loop (`LoopTurns`) was held back by the client. The queue is the
    client's fault ("own") when, since it last was empty, at least half of the loop's turns passed
    with one of its writes so held. Then: past half of either bound a warning is due
    (`take_warning`, once until the queue empties again); past either bound everything pending is
    dropped and the connection told why (`restart` = `slow_consumer`: a socket closes 4108, a
    stream starts over from a snapshot). A queue that grows while its writes keep completing is the
    process being behind (its loop turns are long): no warning, and only past BEHIND_FACTOR times
    its bounds it starts over quietly (`restart` = BEHIND: fresh snapshots, the connection stays).
    A connection that never reports writes (an internal reader) is never "own".

    Other reasons to start over: the fan-out reconnected, the key's scopes changed; a reason in
    FINAL (the process is stopping, the key was revoked or lost `wire:connect`) closes the
    connection. `alarm` is set with every reason, so a connection whose sender is stuck writing to
    a reader that does not read is closed all the same."""

    def __init__(self, max_messages: int = QUEUE_MAX, max_bytes: int = QUEUE_BYTES) -> None:
        # None: woken to start over (see `take_restart`); `_EMPTY` while nothing is pending
        self._items: deque[Delta | None] | tuple = _EMPTY
        self._waiter: asyncio.Future | None = None  # the reader waiting in `wait`
        self._timer: asyncio.TimerHandle | None = None  # ends a `wait` that has a timeout
        self.max_messages = max_messages
        self.max_bytes = max_bytes
        self.pending_bytes = 0
        self.restart: str | None = None  # "slow_consumer", "reconnected", BEHIND, RESCOPED or one of FINAL
        self.scopes: frozenset[str] | None = None  # with RESCOPED: the key's scopes now
        self.alarm = Alarm()  # a restart reason was set
        self._warning_due = False
        self._warned = False  # this slow spell's warning was given
        self._turns: LoopTurns | None = None  # set by the first `writing`
        self._write_began: int | None = None  # the turn the write in progress began at
        self._spell_began: int | None = None  # the turn the queue last stopped being empty at
        self._held = 0  # turns of this spell during which a write of ours was held past FREE_TURNS

    # ---- the connection's own writes ---------------------------------------------------------

    def writing(self) -> None:
        """The connection begins a write to its client (any frame: deltas, snapshots, pings)."""
        if self._turns is None:
            self._turns = loop_turns()
        self._write_began = self._turns.hold()

    def written(self) -> None:
        """That write completed (or failed)."""
        began, self._write_began = self._write_began, None
        if began is None or self._turns is None:
            return
        self._turns.release()
        if self._spell_began is not None:
            self._held += max(0, self._turns.count - max(began, self._spell_began) - FREE_TURNS)

    def own(self) -> bool:
        """Whether what is pending is this connection's own fault: its write in progress has been
        pending STUCK_TURNS turns (its client stopped reading), or its writes were held back by its
        client for at least half of the loop's turns since the queue last was empty (it reads,
        but slower than its deltas come)."""
        turns, began = self._turns, self._spell_began
        if turns is None or began is None:
            return False
        held = self._held
        if self._write_began is not None:  # the write in progress, stuck perhaps
            if turns.count - self._write_began >= STUCK_TURNS:
                return True
            held += max(0, turns.count - max(self._write_began, began) - FREE_TURNS)
        return held > 0 and 2 * held >= turns.count - began

    def put(self, topic: str, delta: Delta) -> None:
        if self.restart is not None:
            return  # starting over anyway
        items = self._items
        messages, size = len(items) + 1, self.pending_bytes + len(delta.payload)
        if not items and self._turns is not None:
            self._spell_began, self._held = self._turns.count, 0
        if 2 * messages > self.max_messages or 2 * size > self.max_bytes:  # past half: whose fault?
            own = self.own()
            if own and (messages > self.max_messages or size > self.max_bytes):
                self.start_over("slow_consumer")
                return
            if messages > BEHIND_FACTOR * self.max_messages or size > BEHIND_FACTOR * self.max_bytes:
                self.start_over(BEHIND)
                return
            if own and not self._warned:
                self._warned = self._warning_due = True
        if items is _EMPTY:
            items = self._items = deque()
        items.append(delta.on(topic))  # a Delta not from the log (tests) is told its topic
        self.pending_bytes = size
        self.poke()

    def poke(self) -> None:
        """Wake the reader waiting in `wait` (something else for it to do: a request, a timer)."""
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def pending(self) -> bool:
        return bool(self._items)

    def count(self) -> int:
        """How many items are pending (not `__len__`: an empty Inbox must stay truthy)."""
        return len(self._items)

    def take(self) -> Delta | None:
        """The next delta (`pending` first), or None when woken to start over (see `take_restart`)."""
        item = self._items.popleft()
        if item is not None:
            self.pending_bytes -= len(item.payload)
        if not self._items:
            self._items = _EMPTY  # its deque goes: an idle connection holds none
            self._warned = False  # caught up: a later slow spell is warned again
            self._spell_began = None
        return item

    def drop_pending(self) -> None:
        """Forget what is pending (a reader for whom one wake-up covers everything that arrived)."""
        while self._items:
            self.take()

    async def wait(self, timeout: float | None = None) -> None:
        """Until something is pending, `poke` is called, or `timeout` seconds have passed (or a
        little sooner: the caller looks at the time and waits again)."""
        if self._items:
            return
        loop = asyncio.get_running_loop()
        self._waiter = waiter = loop.create_future()
        if timeout is not None:
            # one timer, kept while it rings no later than asked: a sender waits after every
            # delta, and a timer made and cancelled each time was a good part of its cost
            at = loop.time() + timeout
            if self._timer is None or self._timer.when() > at:
                if self._timer is not None:
                    self._timer.cancel()
                self._timer = loop.call_at(at, self._ring)
        try:
            await waiter
        finally:
            self._waiter = None

    def _ring(self) -> None:
        self._timer = None
        self.poke()

    async def get(self) -> Delta | None:
        """The next delta, or None when woken to start over (see `take_restart`)."""
        while not self._items:
            await self.wait()
        return self.take()

    def take_warning(self) -> bool:
        """Whether the reader is to be warned now (`slow_consumer`), once per slow spell."""
        due, self._warning_due = self._warning_due, False
        return due

    def start_over(self, why: str) -> None:
        if self.restart in FINAL:
            return  # the connection closes
        self.restart = why
        self._items = deque((None,))  # what was pending is dropped; the None wakes the reader
        self.pending_bytes = 0
        self._warning_due = self._warned = False
        self._spell_began = None
        self.poke()
        self.alarm.set()

    def take_restart(self) -> str | None:
        why, self.restart = self.restart, None
        if why not in FINAL:
            self.alarm.clear()
        return why


class Alarm:
    """`asyncio.Event`'s set / clear / is_set / wait without its deque of waiters made up front:
    an Event is 860 bytes, and every connection has one, nearly always unset and awaited by one
    task (the socket's watch). Waiters are kept in a list made by the first `wait`."""

    __slots__ = ("_set", "_waiters")

    def __init__(self) -> None:
        self._set = False
        self._waiters: list[asyncio.Future] | None = None

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        if self._set:
            return
        self._set = True
        waiters, self._waiters = self._waiters, None
        for waiter in waiters or ():
            if not waiter.done():
                waiter.set_result(True)

    def clear(self) -> None:
        self._set = False

    async def wait(self) -> bool:
        if self._set:
            return True
        waiter = asyncio.get_running_loop().create_future()
        if self._waiters is None:
            self._waiters = []
        self._waiters.append(waiter)
        try:
            await waiter
            return True
        finally:
            if self._waiters is not None and waiter in self._waiters:  # cancelled: it waits no more
                self._waiters.remove(waiter)
                if not self._waiters:
                    self._waiters = None


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
        # per topic kind, who is told when this process's first subscriber of a topic of that kind
        # arrives (`(dataset, topic, True)`) and its last one leaves (`False`): a topic whose
        # deltas the process itself makes while followed (`answer:`, api.answers.live)
        self.watchers: dict[str, Callable[[str, str, bool], None]] = {}

    async def start(self) -> None:
        """Connect and position at the log end; idempotent. Raises when the broker is unreachable."""
        async with self._started:
            if self._task is not None and not self._task.done():
                return
            consumer = await self._connect()
            self._task = asyncio.create_task(self._run(consumer), name="wire-fanout")

    async def _connect(self):
        consumer = make_consumer(self._settings, fetch_max_wait_ms=wait_for_new_ms(self._settings, 20),
                                 auto_offset_reset="latest")
        try:
            # started inside the try (the rule of infra/kafka.py's `started` and `start_or_stop`,
            # here with the seeks too, since the consumer is kept past this call): a start that
            # fails (the broker is down) or is cancelled (`fanout_of`'s timeout, a broker that does
            # not answer) stops its consumer too, not left behind with its connection
            await consumer.start()
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
                    batches = await consumer.getmany(timeout_ms=200, max_records=BATCH_RECORDS)
                    now = self._clock()
                    handed = 0
                    for tp, records in batches.items():
                        dataset = self._datasets[tp.topic]
                        for record in records:
                            self._deliver(dataset, record.key, record.value, now)
                            handed += 1
                            if handed % HAND_OVER == 0:
                                await asyncio.sleep(0)  # the senders drain what they were handed
                    await asyncio.sleep(0)
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
        delta = delta.on(topic)  # the record's key decides, as it always did
        self.recent[dataset].add(topic, delta.seq, delta, now)
        for sub in self._subscriptions.get((dataset, topic), ()):
            sub.inbox.put(topic, delta)

    def new_inbox(self) -> Inbox:
        """A connection's send queue, bounded as configured."""
        return Inbox(self._settings.wire_send_queue_messages, self._settings.wire_send_queue_bytes)

    def subscribe(self, dataset: str, topic: str, inbox: Inbox | None = None) -> Subscription:
        sub = Subscription(dataset, topic, inbox or self.new_inbox())
        subs = self._subscriptions.setdefault((dataset, topic), set())
        first = not subs
        subs.add(sub)
        if first:
            self._watch(dataset, topic, True)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        subs = self._subscriptions.get((sub.dataset, sub.topic))
        if subs is not None and sub in subs:
            subs.discard(sub)
            if not subs:
                del self._subscriptions[(sub.dataset, sub.topic)]
                self._watch(sub.dataset, sub.topic, False)

    def _watch(self, dataset: str, topic: str, on: bool) -> None:
        watcher = self.watchers.get(topic.partition(":")[0])
        if watcher is not None:
            watcher(dataset, topic, on)

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
