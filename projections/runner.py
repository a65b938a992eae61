"""`svc projector run`: the long-running projector of both datasets.

Start-up, in order: topics exist; per dataset the log epoch is read and the read models are
checked against it (stale -> rebuild from offset 0 and swap); state is loaded (rocksdict cache
if its watermark matches Postgres, else Postgres); the outbox relay starts. Then the fast
aiokafka path catches up and keeps following the log while the faust worker joins its group;
once faust has its partitions the catch-up stops, faust resumes at the tracked offsets and the
agents carry the live path. Should a dataset's live path fall `live_far_behind` records behind
the log (faust's fetches slow down on a long log on the embedded broker), its partitions are
paused in faust and handed back to the bulk path in-process until it is near the head again;
then faust is moved to the tracked offsets and resumed (`keep_up`). A watchdog exits (for the supervisor to restart us) when the log
epoch changes under us, for instance when the embedded broker was restarted.

Nothing here waits forever. A batch that fails (the database killed under it) stops the
process; so does a database out of reach for `stall_after_seconds` (30 s), a log that cannot
be read that long, or a log we are behind on while our tracking rows stand still that long. Stopping is bounded as well: faust's own stop
never ends at a broker that does not answer (its consumer waits out each request's timeout), and
one begun while its consumer is joining the group can wait for the join as long; so after
`projector_stop_seconds` the process ends itself and the supervisor restarts it, and once our own
parts are drained and closed it ends at once, whatever faust still waits for (its thread, not a
daemon, would hold the interpreter's exit). A restart resumes from the tracking rows, so nothing
committed is lost and nothing uncommitted counted.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from functools import partial

import asyncpg
from aiokafka.errors import IllegalStateError

from infra.db import DATABASE_DOWN, connect, wait_for_database
from infra.kafka import make_producer, start_or_stop
from infra.log_epoch import ensure_epoch, read_epoch
from infra.migrate import migrate
from infra.settings import Settings
from infra.topics import ensure_topics
from projections.faust_adapter import fetch_wait, move_to, set_fetch_wait, unfed
from projections.faust_app import build_app
from projections.lag import group_name
from projections.live_batches import LiveBatches
from projections.log_ends import log_end_offsets
from projections.outbox import OutboxRelay
from projections.pg_state import read_tracking
from projections.progress import is_stalled, records_behind
from projections.projector import DatasetProjector
from projections.rebuild import rebuild, stale_reason
from projections.replay import catch_up
from schemas.datasets import DATASETS, WIRE_DELTAS, Dataset, pg_schema, topic_name

log = logging.getLogger("projections.runner")
WATCH_EVERY = 5.0
EXIT_LOG_CHANGED = 3  # the log changed under the read models: the restart rebuilds them (giving up is 1)
# of the longest a stop may take (Settings.projector_stop_seconds, 25 s), the share faust's own
# stop is waited for: it leaves its consumer group, which can take several seconds on a busy
# machine (6 s was seen to be too short), and the rest bounds our own drains and closes
FAUST_STOP_SHARE = 0.6
# The live path freezes what each batch leaves (gc.freeze), so the cyclic collector only ever
# scans what was made since the last batch: a full collection of the projector's heap (state,
# faust, clients) took up to 65 ms here, a pause every event in flight paid for. Every
# COLLECT_EVERY seconds everything is handed back for one full collection, so cycles that
# became garbage after they were frozen are still reclaimed.
COLLECT_EVERY = 600.0
# faust's consumer runs in a thread of its own and hands records to the event loop's thread;
# with both busy, each handover of the GIL waits out the switch interval (5 ms by default),
# which every event in flight pays for. 1 ms: live p99 to the delta 47 -> 35 ms (median of
# seven runs each, docs/benchmarks.md)
SWITCH_INTERVAL = 0.001
# how often each dataset's live lag is read (from faust's own fetch high watermarks: no request)
KEEP_UP_EVERY = 1.0
# The embedded broker lists every record batch of a partition before it answers a fetch with its
# records, and a fetch whose wait runs out first comes back with none from that partition
# (docs/architecture.md, "Known limits of the embedded broker"): past ~20,000 batches a partition
# gave faust's 10 ms fetches nothing at all. The batches only grow while the process runs, so a
# wait that came back empty is doubled, never narrowed again (a restart starts from the setting),
# up to this: at the head the wait is the live latency floor there. 100 ms read a partition of
# 20,000 batches here; the bulk path's hand-back covers what even this cannot read.
LIVE_FETCH_WAIT_MAX_MS = 200


class FailingFor:
    """How long a check has failed without a success between: the watch gives up on the database
    or the log by this, not by a count of failures (a count means nothing when each try can take
    from milliseconds to its whole timeout)."""

    def __init__(self, limit: float, failing: str, given_up: str) -> None:
        self.limit = limit
        self.failing = failing  # logged with each failure: "<failing> for <n>s (<error>)"
        self.given_up = given_up  # the reason to give up: "<given_up> for <n>s"
        self.since: float | None = None

    def ok(self) -> None:
        self.since = None

    def failed(self, exc: BaseException) -> str | None:
        """One more failure, logged; the reason to give up once the failures have lasted `limit`."""
        now = time.monotonic()
        if self.since is None:
            self.since = now
        waited = now - self.since
        log.warning("%s for %.0fs (%r)", self.failing, waited, exc)
        return f"{self.given_up} for {waited:.0f}s" if waited >= self.limit else None


@dataclass
class Lane:
    """One dataset's projector with its connections, relay and catch-up task."""

    projector: DatasetProjector
    conn: asyncpg.Connection
    relay_conn: asyncpg.Connection
    relay: OutboxRelay
    writer: LiveBatches  # the live path's batches: what faust's agent takes, applied (faust_app)
    tasks: list[asyncio.Task] = field(default_factory=list)
    catch_up_stop: asyncio.Event = field(default_factory=asyncio.Event)
    at_head: asyncio.Event = field(default_factory=asyncio.Event)  # the catch-up got near the log end
    catch_up_task: asyncio.Task | None = None
    live: bool = False  # faust's agent carries this dataset (handed over, not handed back to the bulk path)


class Projector:
    def __init__(self, settings: Settings, datasets: tuple[Dataset, ...] = DATASETS) -> None:
        self.settings = settings
        self.datasets = datasets
        self.lanes: dict[str, Lane] = {}
        self.stop = asyncio.Event()
        self.exit_code = 0
        self.ready = asyncio.Event()
        self.producer = None
        self.app = None
        self._unfed: dict = {}  # faust's partitions fetched without records at the last look, by position

    async def prepare(self) -> None:
        s = self.settings
        await wait_for_database(s.require_database(), timeout=s.stall_after_seconds)
        conn = await connect(s.require_database())
        try:
            await migrate(conn)  # a no-op when `svc up` migrated already; run standalone, it must
        finally:
            await conn.close()
        await ensure_topics(s)
        self.producer = await start_or_stop(make_producer(s, linger_ms=1))
        for dataset in self.datasets:
            self.lanes[dataset] = await self._prepare_lane(dataset)

    async def _prepare_lane(self, dataset: Dataset) -> Lane:
        s = self.settings
        started = time.monotonic()
        conn = await connect(s.require_database())
        relay_conn = await connect(s.require_database())
        epoch = await ensure_epoch(s, dataset)
        projector = DatasetProjector(s, dataset)
        ends = await log_end_offsets(s, projector.topics)
        reason = await stale_reason(conn, pg_schema(dataset), epoch, ends)
        if reason is not None:
            log.warning("%s: read models are stale (%s): rebuilding from offset 0", dataset, reason)
            lock_conn = await connect(s.require_database())
            try:
                result = await rebuild(s, dataset, conn, lock_conn, new_log=True)
            finally:
                await lock_conn.close()
            log.warning("%s: rebuilt from %d records (generation %d)", dataset, result.records, result.generation)
        await projector.open(conn, epoch)
        relay = OutboxRelay(relay_conn, pg_schema(dataset), topic_name(dataset, WIRE_DELTAS, s.topic_namespace),
                            self.producer)
        projector.relay = relay
        lane = Lane(projector, conn, relay_conn, relay, LiveBatches(partial(self.apply, projector),
                                                                   idle=partial(self.idle, projector)))
        for task in (asyncio.create_task(relay.run(), name=f"relay-{dataset}"),
                     asyncio.create_task(lane.writer.run(), name=f"live-writer-{dataset}")):
            task.add_done_callback(self._task_done)
            lane.tasks.append(task)
        log.info("%s: prepared in %.2fs (state from %s)", dataset, time.monotonic() - started,
                 projector.stats.loaded_from)
        return lane

    def start_catch_up(self) -> None:
        for lane in self.lanes.values():
            self._start_catch_up(lane)

    def _start_catch_up(self, lane: Lane) -> None:
        """The bulk path, following the log from the tracked offsets, until `catch_up_stop`."""
        lane.at_head.clear()
        lane.catch_up_stop.clear()
        lane.catch_up_task = asyncio.create_task(
            catch_up(lane.projector, lane.conn, follow=True, stop=lane.catch_up_stop, at_head=lane.at_head,
                     batch_records=self.settings.catch_up_batch),
            name=f"catch-up-{lane.projector.dataset}",
        )
        lane.catch_up_task.add_done_callback(self._task_done)

    async def _until_head(self, lane: Lane) -> None:
        """Once the lane's catch-up is near the log end (or told to stop), stop it and let it
        finish its batch."""
        if lane.catch_up_task is not None and not lane.catch_up_task.done():
            waits = [asyncio.ensure_future(e.wait()) for e in (lane.at_head, lane.catch_up_stop, self.stop)]
            try:
                await asyncio.wait([*waits, lane.catch_up_task], return_when=asyncio.FIRST_COMPLETED)
            finally:
                for w in waits:
                    w.cancel()
        lane.catch_up_stop.set()
        if lane.catch_up_task is not None:
            # shielded: a waiter cancelled (a stop) leaves the catch-up to finish its batch for
            # shutdown(), which waits for it, rather than interrupting it mid-write
            await asyncio.shield(lane.catch_up_task)

    async def hand_over(self) -> None:
        """Called by faust before it resumes: once the catch-up is near the log end, stop it
        and let it finish its batch. (A restart's backlog goes through the catch-up, several
        times faster than the agents; faust keeps its partitions paused meanwhile.)"""
        await self.ready.wait()
        await asyncio.gather(*(self._until_head(lane) for lane in self.lanes.values()))
        for lane in self.lanes.values():
            lane.live = True

    async def keep_up(self) -> None:
        """Hand a dataset whose live path is `live_far_behind` records behind the log back to
        the bulk path, until it is near the head again. On the embedded broker a fetch costs in
        proportion to the record batches a partition holds, and faust's agents, which take a
        fetch's records one by one, fell behind at 2,000 events/s on a 1,000,000-event log and
        never caught up (the watchdog's stall rule then restarted the process, whose catch-up
        was back at the head in seconds); the bulk path reads the same log several times faster."""
        while not self.stop.is_set():
            await asyncio.sleep(KEEP_UP_EVERY)
            self._widen_fetch_wait()
            for lane in self.lanes.values():
                if not lane.live or self.stop.is_set():
                    continue
                tps, behind = self._live_lag(lane)
                if behind >= self.settings.live_far_behind:
                    await self._bulk_until_head(lane, tps, behind)

    def _widen_fetch_wait(self) -> None:
        """Double faust's fetch wait when a partition of a live dataset came back from its fetches
        without records for a whole round while the log holds more past its position
        (LIVE_FETCH_WAIT_MAX_MS: why)."""
        try:
            assigned = self.app.consumer.assignment()
        except Exception:  # faust's consumer not started yet
            return
        tps = [tp for lane in self.lanes.values() if lane.live for tp in assigned if tp.topic in lane.projector.topics]
        now = unfed(self.app, tps)
        stuck = sorted(f"{tp.topic}[{tp.partition}]@{pos}" for tp, pos in now.items() if self._unfed.get(tp) == pos)
        self._unfed = now
        wait = fetch_wait(self.app)
        if stuck and wait is not None and wait < LIVE_FETCH_WAIT_MAX_MS:
            wider = min(LIVE_FETCH_WAIT_MAX_MS, wait * 2)
            set_fetch_wait(self.app, wider)
            log.warning("faust's fetches brought no records from %s for %.0fs though the log holds more: "
                        "fetch wait %d -> %d ms", ", ".join(stuck), KEEP_UP_EVERY, wait, wider)

    def _live_lag(self, lane: Lane) -> tuple[list, int]:
        """The lane's partitions faust holds, and the records past the tracked offsets by the
        high watermarks of faust's last fetches (no request to the broker)."""
        consumer = self.app.consumer
        tps = [tp for tp in consumer.assignment() if tp.topic in lane.projector.topics]
        behind = 0
        for tp in tps:
            try:
                mark = consumer.highwater(tp)
            except AssertionError:  # taken away by a rebalance since assignment() was read
                continue
            if mark is not None:
                behind += max(0, mark - lane.projector.committed.get((tp.topic, tp.partition), -1) - 1)
        return tps, behind

    async def _bulk_until_head(self, lane: Lane, tps: list, behind: int) -> None:
        """Pause the lane's partitions in faust, catch up through the bulk path to near the
        head, then move faust to the tracked offsets and resume it. Exactly once throughout: the
        bulk path holds the projector's lock while it runs, so the live writer waits; what faust
        had taken before the pause is applied after it, and skipped where the bulk path applied it
        (records at or below the tracked offsets are); faust resumes at the tracked offset + 1."""
        dataset = lane.projector.dataset
        started = time.monotonic()
        before = sum(offset + 1 for offset in lane.projector.committed.values())
        log.warning("%s: the live path is %d records behind the log: handing it to the bulk path", dataset, behind)
        consumer = self.app.consumer
        consumer.pause_partitions(tps)
        lane.live = False
        try:
            self._start_catch_up(lane)
            await self._until_head(lane)
            await lane.writer.drain()  # what faust took before the pause (skipped where already applied)
        finally:
            # partitions a rebalance took away meanwhile are not ours to move
            held = [tp for tp in tps if tp in consumer.assignment()]
            for tp in held:
                try:
                    await move_to(self.app, tp, lane.projector.committed.get((tp.topic, tp.partition), -1) + 1)
                except IllegalStateError:  # taken away by a rebalance meanwhile: faust resumes it itself
                    pass
            consumer.resume_partitions(held)
        lane.live = True
        applied = sum(offset + 1 for offset in lane.projector.committed.values()) - before
        log.warning("%s: back to the live path at the head: %d records applied in %.1fs since the hand-back", dataset,
                    applied, time.monotonic() - started)

    async def apply(self, projector: DatasetProjector, records: list) -> None:
        lane = self.lanes[projector.dataset]
        try:
            # the lock kept for the next batch; `idle` lets go of it once none waits
            await projector.apply(lane.conn, records, hold=True)
        except Exception:
            log.exception("%s: a batch failed; exiting for a clean restart", projector.dataset)
            self.exit_code = 1
            self.stop.set()
            raise
        gc.freeze()

    async def idle(self, projector: DatasetProjector) -> None:
        async with projector.lock:
            await projector.release()

    async def collect_now_and_then(self) -> None:
        while not self.stop.is_set():
            await asyncio.sleep(COLLECT_EVERY)
            gc.unfreeze()
            gc.collect()
            gc.freeze()

    def _task_done(self, task: asyncio.Task) -> None:
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            log.error("%s failed: %r; exiting for a clean restart", task.get_name(), exc)
            self.exit_code = 1
            self.stop.set()

    async def watch(self) -> None:
        """Exit when the log under us changed (a new broker, or recreated topics): the restart
        finds the read models stale and rebuilds them from the new log. Exit too when the
        database is out of reach, or we are behind the log and not committing, for longer than
        `stall_after_seconds` (the limit `svc doctor` applies): give up, for the supervisor to
        restart us. So too when the log cannot be read that long (a broker overloaded or out of
        reach): a log we cannot read is not a log that changed, and a rebuild would only replay
        from the same broker the same records once it answers; a plain restart resumes."""
        give_up_after = self.settings.stall_after_seconds
        unread = FailingFor(give_up_after, "cannot check the log", "the log could not be read")
        conn: asyncpg.Connection | None = None
        unreachable = FailingFor(give_up_after, "cannot reach the database", "the database has been out of reach")
        # per dataset: the tracking rows last seen while behind the log, and since when
        still: dict[str, tuple[dict, float]] = {}
        try:
            while not self.stop.is_set():
                await asyncio.sleep(WATCH_EVERY)
                if conn is None or conn.is_closed():
                    try:
                        conn = await connect(self.settings.require_database(), timeout=WATCH_EVERY)
                        unreachable.ok()
                    except DATABASE_DOWN as exc:
                        conn = None
                        if given_up := unreachable.failed(exc):
                            self._give_up(given_up)
                            return
                        continue
                for dataset, lane in self.lanes.items():
                    try:
                        epoch = await asyncio.wait_for(read_epoch(self.settings, dataset), WATCH_EVERY)
                        reason = None
                        if epoch == lane.projector.epoch:
                            # tracking first: a batch committed meanwhile is then below the ends
                            tracking = await asyncio.wait_for(read_tracking(conn, pg_schema(dataset)), WATCH_EVERY)
                            ends = await asyncio.wait_for(log_end_offsets(self.settings, lane.projector.topics),
                                                          WATCH_EVERY)
                            reason = await stale_reason(conn, pg_schema(dataset), epoch, ends, tracking)
                            if self._stalled(dataset, tracking, ends, still):
                                return
                        unread.ok()
                    except Exception as exc:
                        if conn.is_closed():  # the database, not the log: reconnect next round
                            log.warning("lost the database connection (%r)", exc)
                            break
                        if given_up := unread.failed(exc):
                            self._give_up(given_up)
                            return
                        continue
                    if epoch != lane.projector.epoch or reason is not None:
                        log.error("%s: the log changed under the read models (%s): exiting to rebuild", dataset,
                                  reason or f"epoch {lane.projector.epoch} -> {epoch}")
                        self.exit_code = EXIT_LOG_CHANGED
                        self.stop.set()
                        return
        finally:
            if conn is not None:
                conn.terminate()

    def _stalled(self, dataset: str, tracking: dict, ends: dict, still: dict[str, tuple[dict, float]]) -> bool:
        """Behind the log with the tracking rows unchanged for longer than the limit: give up.
        Timed from when we first saw them so, which is after both the last commit and the
        arrival of what we are behind on (progress.stuck_for, as `svc doctor` measures it)."""
        behind = records_behind(tracking, ends)
        if not behind:
            still.pop(dataset, None)
            return False
        seen = still.get(dataset)
        if seen is None or seen[0] != tracking:
            still[dataset] = (tracking, time.monotonic())
            return False
        limit = self.settings.stall_after_seconds
        if not is_stalled(behind, time.monotonic() - seen[1], limit):  # the rule `svc doctor` applies
            return False
        self._give_up(f"{dataset}: behind the log with nothing committed for {limit:.0f}s")
        return True

    def _give_up(self, why: str) -> None:
        log.error("%s: exiting for the supervisor to restart us", why)
        self.exit_code = 1
        self.stop.set()

    def _arm_exit_deadline(self) -> None:
        """End the process if stopping takes longer than `projector_stop_seconds`, whatever is
        stuck: a thread, because a stuck stop may hold the event loop."""
        deadline = self.settings.projector_stop_seconds

        def expire() -> None:
            log.error("stopping took longer than %.0fs: ending the process", deadline)
            _end_process(self.exit_code or 1)

        timer = threading.Timer(deadline, expire)
        timer.daemon = True
        timer.start()

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.stop.set)
        started = time.monotonic()
        await self.prepare()
        self.start_catch_up()
        self.ready.set()
        self.app = build_app(
            self.settings, group_name(self.settings), {d: lane.projector for d, lane in self.lanes.items()},
            {d: lane.writer for d, lane in self.lanes.items()}, self.hand_over,
        )
        faust_start = asyncio.create_task(self.app.start(), name="faust")
        faust_start.add_done_callback(self._task_done)
        watchdog = asyncio.create_task(self.watch(), name="watchdog")
        collector = asyncio.create_task(self.collect_now_and_then(), name="collector")
        keeper = asyncio.create_task(self.keep_up(), name="keep-up")
        keeper.add_done_callback(self._task_done)
        log.info("projector running (start-up %.2fs)", time.monotonic() - started)
        await self.stop.wait()
        self._arm_exit_deadline()
        watchdog.cancel()
        collector.cancel()
        keeper.cancel()
        if not await self.shutdown():
            # ours is drained and closed; what faust still waits for (a group leave, a join) only
            # holds its thread, and with it both asyncio.run's clean-up (it awaits the cancelled
            # stop, which joins that thread) and the interpreter's exit (the thread is no daemon)
            # until the deadline above: end now, with the code this stop is for
            log.warning("ending the process without faust's stop")
            _end_process(self.exit_code)
        return self.exit_code

    async def shutdown(self) -> bool:
        """Stop faust, then drain and close our own parts; False when faust's stop did not end."""
        faust_stopped = True
        for lane in self.lanes.values():
            lane.catch_up_stop.set()
        if self.app is not None:
            # not wait_for: on timeout it waits for the cancelled stop, which faust may never
            # finish (module docstring)
            wait = self.settings.projector_stop_seconds * FAUST_STOP_SHARE
            stopping = asyncio.ensure_future(self.app.stop())
            done, _ = await asyncio.wait({stopping}, timeout=wait)
            if not done:
                log.warning("faust did not stop within %.0fs", wait)
                faust_stopped = False
            elif stopping.exception() is not None:
                log.warning("faust did not stop cleanly: %r", stopping.exception())
        for lane in self.lanes.values():
            if lane.catch_up_task is not None:
                try:
                    await asyncio.wait_for(lane.catch_up_task, 10)
                except BaseException:
                    pass
            try:  # what the agents took (a restart would read it again: this only saves that)
                await asyncio.wait_for(lane.writer.drain(), 10)
            except BaseException:
                pass
            await lane.relay.drain(5)
            for task in lane.tasks:
                task.cancel()
            lane.projector.close()
            for conn in (lane.conn, lane.relay_conn):
                await conn.close()
        if self.producer is not None:
            await self.producer.stop()
        return faust_stopped


def _end_process(code: int) -> None:
    """Exit now, past whatever still runs (threads, asyncio.run's clean-up), logs flushed."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def run_projector(settings: Settings) -> int:
    sys.setswitchinterval(SWITCH_INTERVAL)
    return asyncio.run(Projector(settings).run())
