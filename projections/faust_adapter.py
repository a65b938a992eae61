"""Everything of ours that reaches past faust's public API, in one place, written against one
faust-streaming version (`FAUST_VERSION`, pinned in pyproject.toml).

faust-streaming is the stream processor of the live path (projections/faust_app.py uses it
through its public API: `faust.App`, agents, `take_events`, `on_rebalance_complete`). Two needs
have no public API; each is met here and nowhere else:

1. A short fetch wait. faust builds its worker's aiokafka consumer with `fetch_max_wait_ms=1500`
   and no setting to change it. The embedded broker (tansu) does not answer a waiting fetch when
   records arrive, so that wait is the live latency floor there (measured: p50 450 ms at 1500,
   27 ms at 100, 2 ms at 5); shorter waits cost idle CPU (empty fetches: ~20% of a core at 5 ms),
   hence 10 (500 where the broker answers a waiting fetch on arrival, as the log keeper does:
   `infra.kafka.wait_for_new_ms`). Relies on: `AIOKafkaConsumerThread._create_worker_consumer(transport)` building the
   consumer, `Consumer._new_consumer_thread()` choosing the thread class, the transport alias
   registry `faust.transport.drivers.TRANSPORTS.aliases`, and aiokafka's consumer reading
   `_fetch_max_wait_ms` when it starts (it hands it to its fetcher).
2. Resuming at our tracked offsets. The read models' tracking rows are the truth, Kafka's
   committed offsets a hint. faust seeks its partitions to the committed offsets right after
   `on_rebalance_complete` (faust/tables/recovery.py), so in that signal we commit the tracked
   offsets + 1 through the consumer thread (`app.consumer._thread.commit(offsets)`); faust's
   public `Consumer.commit` only commits what its own agents acknowledged.
3. Moving faust past records the bulk path applied (`runner.Projector._bulk_until_head`). faust's
   public `Consumer.seek` moves aiokafka's position and faust's read offset, but not faust's
   commit bookkeeping: faust commits a partition only up to the first offset its agents have not
   acknowledged past its last commit (`Consumer._new_offset`), so the records skipped by the
   seek were a gap it never filled. It then committed that partition never again and kept every
   offset acknowledged after it (`_acked`, `_acked_index`) for the life of the process. So after
   the seek we set faust's committed offset to where it now reads (`_committed_offset`) and drop
   what it holds below it (`_acked`, `_acked_index`, `_gap`), under faust's `ack_lock` (acks
   change them under it).

4. Widening the fetch wait while running (`runner.Projector._widen_fetch_wait`). The embedded
   broker answers a fetch with no records from a partition whose batches it cannot list within
   the wait, so the projector looks at aiokafka's fetch state (`consumer._fetcher`: its
   subscription's per-partition position and high watermark, `_records` for what was fetched
   and not yet taken) and raises `_fetch_max_wait_ms` on the running fetcher, which reads it for
   every fetch request it builds.

5. A batch timer that starts at the batch's first record. faust's `Stream.take_events(max_,
   within)` waits for a full buffer with a timeout of `within` in a loop, so an idle agent wakes
   every `within` (5 ms here): ~40 wake-ups of 3 tasks a second per dataset, most of an idle
   projector's CPU. `take_events` below is faust's own (faust/streams.py, the same buffering
   processor, manual acks after the batch is consumed, `enable_acks` restored and the processor
   removed at the end), but waits with no timeout until the first record is buffered, then up to
   `within` for the batch to fill. Relies on: `Stream._enable_passive(channel)` (the stream
   drains itself into the processor), `Stream._processors`, and `Stream._active_agens` (faust
   closes the generators it holds there when the stream stops).

tests/unit/test_faust_adapter.py fails on any other faust-streaming version and checks the hooks
above still exist as used; tests/integration/test_faust_adapter.py checks the fetch wait reaches
a started consumer, tests/integration/test_projector_runner.py that faust resumes at the
tracked offsets, and tests/integration/test_projector_handbacks.py that faust commits again
after a hand-back moved it forward. On an upgrade, re-check each numbered point against the new sources, then move
`FAUST_VERSION` and the pin together.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping

import faust
from mode.utils.futures import notify
from faust.transport.drivers import TRANSPORTS
from faust.transport.drivers import aiokafka as faust_aiokafka
from faust.types.tuples import ack_lock

FAUST_VERSION = "0.15.3"
FETCH_MAX_WAIT_MS = 10
SCHEME = "svckafka"
_WAIT_ATTR = "_svc_fetch_max_wait_ms"  # a start wait other than FETCH_MAX_WAIT_MS (start_fetch_wait)


class _ConsumerThread(faust_aiokafka.AIOKafkaConsumerThread):
    def _create_worker_consumer(self, transport):
        consumer = super()._create_worker_consumer(transport)
        # read when the consumer starts
        consumer._fetch_max_wait_ms = getattr(self.app, _WAIT_ATTR, FETCH_MAX_WAIT_MS)
        return consumer


class _Consumer(faust_aiokafka.Consumer):
    def _new_consumer_thread(self) -> _ConsumerThread:
        return _ConsumerThread(self, loop=self.loop, beacon=self.beacon)


class Transport(faust_aiokafka.Transport):
    """faust's aiokafka transport with a short fetch wait (URL scheme `svckafka://`)."""

    Consumer = _Consumer


TRANSPORTS.aliases.setdefault(SCHEME, f"{__name__}:Transport")


def broker_url(bootstrap: str) -> str:
    """faust's broker URL for a bootstrap list, through this module's transport."""
    return ";".join(f"{SCHEME}://{host.strip()}" for host in bootstrap.split(",") if host.strip())


async def commit_offsets(app: faust.App, offsets: Mapping) -> None:
    """Commit `offsets` (TP -> next offset to read) for the app's group now; called in
    `on_rebalance_complete`, it decides where faust resumes (point 2 above)."""
    await app.consumer._thread.commit(offsets)


async def move_to(app: faust.App, tp, offset: int) -> None:
    """Move faust's consumer to read `tp` from `offset` on, its commit bookkeeping with it
    (point 3 above). Raises aiokafka's IllegalStateError for a partition no longer assigned."""
    consumer = app.consumer
    await consumer.seek(tp, offset)
    with ack_lock:
        consumer._committed_offset[tp] = offset
        acked = consumer._acked.get(tp)
        if acked:
            acked[:] = [o for o in acked if o >= offset]
        index = consumer._acked_index.get(tp)
        if index:
            index.difference_update([o for o in index if o < offset])
        gap = consumer._gap.get(tp)
        if gap:
            gap.chop(0, offset)


def start_fetch_wait(app: faust.App, ms: int) -> None:
    """The fetch wait `app`'s worker consumer starts with (point 1; FETCH_MAX_WAIT_MS if unset)."""
    setattr(app, _WAIT_ATTR, ms)


def _worker(app: faust.App):
    """aiokafka's consumer under faust's worker, None before it is built."""
    thread = getattr(app.consumer, "_thread", None)
    return getattr(thread, "_consumer", None)


def fetch_wait(app: faust.App) -> int | None:
    """The fetch wait (ms) the worker consumer asks the broker for now (point 4)."""
    consumer = _worker(app)
    return None if consumer is None else consumer._fetcher._fetch_max_wait_ms


def set_fetch_wait(app: faust.App, ms: int) -> None:
    """Change the fetch wait of the running worker consumer: its fetcher reads it for each fetch
    request it builds (point 4); one int assignment, so safe from another thread."""
    consumer = _worker(app)
    if consumer is not None:
        consumer._fetcher._fetch_max_wait_ms = ms


def unfed(app: faust.App, tps) -> dict:
    """Of `tps`, those whose fetches came back without records though the log holds more past
    the position, each with that position: behind its high watermark, answered by the broker (a
    high watermark), and nothing fetched waiting to be taken (point 4). Partitions faust paused
    or stopped fetching itself (its buffer full) hold fetched records and are not listed."""
    consumer = _worker(app)
    if consumer is None:
        return {}
    fetcher = consumer._fetcher
    assignment = fetcher._subscriptions.subscription.assignment if fetcher._subscriptions.subscription else None
    if assignment is None:
        return {}
    out = {}
    for tp in tps:
        state = assignment.state_value(tp)  # None: not (or no longer) assigned
        if state is None or not state.has_valid_position or state.highwater is None:
            continue
        if state.position < state.highwater and tp not in fetcher._records:
            out[tp] = state.position
    return out


async def _take_events(stream, max_: int, within: float) -> AsyncIterator[list]:
    buffer: list = []
    events: list = []
    arrived = asyncio.Event()  # the buffer holds a record: the batch timer runs
    full = asyncio.Event()
    consumed = asyncio.Event()
    consuming: asyncio.Future | None = None  # set while the caller holds a batch: adds wait

    async def add_to_buffer(value):
        nonlocal consuming
        try:
            if consuming is not None:
                try:
                    await consuming
                finally:
                    consuming = None
            buffer.append(value)
            event = stream.current_event
            if event is None:
                raise RuntimeError("Take buffer found current_event is None")
            events.append(event)
            arrived.set()
            if len(buffer) >= max_:
                full.set()
                consumed.clear()  # never more than max_ in a batch: wait until this one is taken
                await stream.wait(consumed)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            stream.log.exception("Error adding to take buffer: %r", exc)
            await stream.crash(exc)
        return value

    enable_acks = stream.enable_acks
    stream.enable_acks = False  # acked below, once the caller has consumed the batch
    stream.add_processor(add_to_buffer)
    stream._enable_passive(aiter(stream.channel))
    try:
        while not stream.should_stop:
            # no timeout while nothing is buffered: an idle agent sleeps until a record comes (or
            # the stream stops: both waits then return at once, and what is buffered is yielded)
            await stream.wait_for_stopped(arrived)
            await stream.wait_for_stopped(full, timeout=within)
            if buffer:
                consuming = stream.loop.create_future()
                try:
                    yield list(events)
                finally:
                    buffer.clear()
                    for event in events:
                        await stream.ack(event)
                    events.clear()
                    arrived.clear()  # before the adds waiting on `consuming` resume
                    notify(consuming)
                    full.clear()
                    consumed.set()
    finally:
        stream.enable_acks = enable_acks
        stream._processors.remove(add_to_buffer)


def take_events(stream, max_: int, within: float) -> AsyncIterator[list]:
    """Batches of up to `max_` events of `stream`, each yielded `within` seconds after its first
    record arrived or as soon as it is full; acked once the caller has consumed it (point 5)."""
    agen = _take_events(stream, max_, within)
    stream._active_agens.add(agen)
    return agen


__all__ = ["FAUST_VERSION", "FETCH_MAX_WAIT_MS", "Transport", "broker_url", "commit_offsets", "fetch_wait",
           "move_to", "set_fetch_wait", "start_fetch_wait", "take_events", "unfed"]
