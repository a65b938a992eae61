"""Projection benchmarks, each against a baseline measured in the same run on the same parts.

1. Replay rate of a season-scale log: a full schedule (272 games) priced by 8 books on three
   markets each, round after round, over 1,000,000 price quotes. The replay is the rebuild
   path (`svc projections rebuild|verify`, and the start-up catch-up): plain aiokafka consumer,
   decode, reducers with per-event consensus, rows with all five devig methods per touched line,
   one statement per table per batch into a scratch schema. Baseline: raw aiokafka `getmany`
   of the same topic (decoding nothing).
2. Live latency at 2,000 events/s through `svc projector run` (its own process, faust agents
   after the hand-over): append (just before `send`) -> the tracking row that makes the event's
   read models visible, and append -> its delta on `wire.deltas`. Baseline: append -> receipt
   by a plain consumer of the same feed topic (the broker's own latency).
3. Restart: SIGKILL the projector under that load, append a 50,000-event burst, start it
   again, and time until it is within 10,000 events of the head. Baseline: the share of that
   time the process needed to start (until it logged `projector running`).
"""

from __future__ import annotations

import asyncio
import signal
import time
from datetime import timedelta
from decimal import Decimal

from aiokafka import TopicPartition

from infra.db import connect
from infra.kafka import make_consumer, make_producer
from infra.topics import ensure_topics
from projections.event_time import to_us
from projections.log_ends import high_watermarks, partitions_of
from projections.rebuild import drop_schema, open_scratch
from projections.replay import catch_up
from schemas.datasets import FEED_GAMES, WIRE_DELTAS, topic_name
from schemas.events import Outcome, PriceQuoted, encode
from schemas.natural_keys import market_id
from schemas.wire import decode_envelope
from tests.perf.run import BenchContext, Figure
from tests.support import projection_events as ev
from tests.support.projection_harness import start_projector

GAMES = 272
BOOKS = [f"book{i}" for i in range(8)]
ROUNDS = 154  # 272 games x 8 books x 3 markets x 154 rounds = 1,005,312 quotes
CHUNK = 8  # rounds generated and sent at a time (bounded memory)
RATE = 2_000  # events/s for the live figures
LIVE_SECONDS = 15
BURST = 50_000
WITHIN = 10_000


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _send(producer, settings, events) -> None:
    topic = topic_name("live", FEED_GAMES, settings.topic_namespace)
    futures = [await producer.send(topic, encode(e), key=e.game_id.encode()) for e in events]
    await asyncio.gather(*futures)


async def _season_log(settings) -> int:
    games = ev.schedule(GAMES)
    producer = make_producer(settings, linger_ms=20)
    await producer.start()
    try:
        await _send(producer, settings, games)
        n = len(games)
        for first in range(0, ROUNDS, CHUNK):
            rounds = min(CHUNK, ROUNDS - first)
            quotes = ev.season_quotes(games, BOOKS, rounds, seed=first, first_minute=first, tag=f"r{first}")
            await _send(producer, settings, quotes)
            n += len(quotes)
        return n
    finally:
        await producer.stop()


async def _raw_consume(settings, total: int) -> float:
    consumer = make_consumer(settings, fetch_max_wait_ms=50)
    await consumer.start()
    try:
        tps = await partitions_of(consumer, [topic_name("live", FEED_GAMES, settings.topic_namespace)])
        await high_watermarks(consumer, tps)
        for tp in tps:
            consumer.seek(tp, 0)
        started = time.perf_counter()
        n = 0
        while n < total:
            data = await consumer.getmany(timeout_ms=200, max_records=20_000)
            n += sum(len(v) for v in data.values())
        return n / (time.perf_counter() - started)
    finally:
        await consumer.stop()


async def _replay(settings) -> tuple[float, int]:
    conn = await connect(settings.database_url)
    try:
        scratch = await open_scratch(conn, settings, "live", publish=False)
        try:
            started = time.perf_counter()
            n = await catch_up(scratch.projector, conn)
            return n / (time.perf_counter() - started), n
        finally:
            await drop_schema(conn, scratch.schema)
    finally:
        await conn.close()


# ---- live ---------------------------------------------------------------------------------------

class LiveLoad:
    """Paced quotes, one book per market so every quote moves its market's consensus."""

    PRICES = (-150, -140, -130, -120, -110, 100, 110)

    def __init__(self, settings) -> None:
        self.settings = settings
        self.games = ev.schedule(100)
        self.topic = topic_name("live", FEED_GAMES, settings.topic_namespace)
        self.sent: dict[tuple[int, int], float] = {}  # (partition, offset) -> append time
        self.by_ts: dict[int, float] = {}  # source_ts (us) -> append time
        self.n = 0
        self.base = ev.at(10_000)

    def next_event(self) -> PriceQuoted:
        self.n += 1
        g = self.games[self.n % len(self.games)]
        mtype = ("h2h", "spreads", "totals")[(self.n // len(self.games)) % 3]
        point = {"h2h": None, "spreads": Decimal("-3.5"), "totals": Decimal("47.5")}[mtype]
        sels = ("over", "under") if mtype == "totals" else ("home", "away")
        price = self.PRICES[(self.n // 300) % len(self.PRICES)]
        pts = (point, point) if mtype == "totals" else ((point, -point) if point is not None else (None, None))
        return PriceQuoted(
            event_id=f"evt_live{self.n:012d}", source="bench", source_id=str(self.n),
            source_ts=self.base + timedelta(microseconds=1000 * self.n), ingest_ts=self.base, game_id=g.game_id,
            market_id=market_id(g.game_id, "game", mtype, "full", None), book="solo", kind="game", market_type=mtype,
            point=point, outcomes=[Outcome(selection=s, name=s, price=Decimal(pr), price_format="american", point=pt)
                                   for s, pr, pt in zip(sels, (price, 100 + abs(price) // 2), pts)],
        )

    async def run(self, producer, seconds: float, rate: int) -> None:
        """Send at `rate` per second for `seconds`, recording each event's append time."""
        started = time.perf_counter()
        sent_here = 0
        pending = []
        while (elapsed := time.perf_counter() - started) < seconds:
            due = int(elapsed * rate) + 1
            while sent_here < due:
                e = self.next_event()
                t = time.perf_counter()
                fut = await producer.send(self.topic, encode(e), key=e.game_id.encode())
                self.by_ts[to_us(e.source_ts)] = t
                pending.append((fut, t))
                sent_here += 1
            for fut, t in pending:
                md = await fut
                self.sent[(md.partition, md.offset)] = t
            pending.clear()
            await asyncio.sleep(0.002)

    async def burst(self, producer, n: int) -> None:
        events = [self.next_event() for _ in range(n)]
        await asyncio.gather(*[await producer.send(self.topic, encode(e), key=e.game_id.encode()) for e in events])


async def _watch_tracking(settings, topic: str, seen: dict[tuple[int, int], float], stop: asyncio.Event) -> None:
    """The moment each offset becomes visible as applied in Postgres (polled every 2 ms)."""
    conn = await connect(settings.database_url)
    try:
        applied: dict[int, int] = {}
        while not stop.is_set():
            rows = await conn.fetch("SELECT partition, last_offset FROM live.tracking WHERE topic = $1", topic)
            now = time.perf_counter()
            for r in rows:
                before = applied.get(r["partition"], -1)
                for offset in range(before + 1, r["last_offset"] + 1):
                    seen[(r["partition"], offset)] = now
                applied[r["partition"]] = max(before, r["last_offset"])
            await asyncio.sleep(0.002)
    finally:
        await conn.close()


async def _watch_topic(settings, topic: str, on_record, stop: asyncio.Event) -> None:
    consumer = make_consumer(settings, fetch_max_wait_ms=5)
    await consumer.start()
    try:
        tps = await partitions_of(consumer, [topic])
        ends = await high_watermarks(consumer, tps)
        for tp in tps:
            consumer.seek(tp, ends[(tp.topic, tp.partition)])
        while not stop.is_set():
            data = await consumer.getmany(timeout_ms=20)
            now = time.perf_counter()
            for records in data.values():
                for r in records:
                    on_record(r, now)
    finally:
        await consumer.stop()


async def _wait_for(path, text: str, timeout: float) -> float | None:
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        if path.exists() and text in path.read_text():
            return time.perf_counter() - started
        await asyncio.sleep(0.05)
    return None


async def _faust_floor(ctx: BenchContext) -> tuple[list[float], list[float]]:
    """Latency of a faust agent that does nothing, same broker, same load: the floor of the
    live path, as faust is configured here (also: append -> plain consumer receipt)."""
    import faust

    from projections.faust_app import broker_url

    settings = await ctx.fresh_settings(topic_partitions=4)
    await ensure_topics(settings)
    topic = topic_name("live", FEED_GAMES, settings.topic_namespace)
    app = faust.App(f"{settings.topic_namespace}floor", broker=broker_url(settings.kafka_bootstrap), web_enabled=False,
                    topic_disable_leader=True, topic_allow_declare=False, store="memory://",
                    broker_session_timeout=6, broker_heartbeat_interval=1, broker_rebalance_timeout=6,
                    consumer_auto_offset_reset="latest", autodiscover=False)
    seen: dict[tuple[int, int], float] = {}

    async def agent(stream):
        async for events in stream.take_events(2000, within=0.005):
            now = time.perf_counter()
            for e in events:
                seen[(e.message.partition, e.message.offset)] = now

    app.agent(app.topic(topic, key_serializer="raw", value_serializer="raw"), name="floor")(agent)
    await app.start()
    raw_seen: dict[tuple[int, int], float] = {}
    stop = asyncio.Event()
    watcher = asyncio.create_task(_watch_topic(settings, topic, lambda r, now: raw_seen.__setitem__(
        (r.partition, r.offset), now), stop))
    producer = make_producer(settings, linger_ms=0)
    await producer.start()
    try:
        await asyncio.sleep(2.0)
        load = LiveLoad(settings)
        await load.run(producer, LIVE_SECONDS, RATE)
        await asyncio.sleep(1.0)
        faust_lat = [(seen[k] - t) * 1000 for k, t in load.sent.items() if k in seen]
        raw_lat = [(raw_seen[k] - t) * 1000 for k, t in load.sent.items() if k in raw_seen]
        return faust_lat, raw_lat
    finally:
        stop.set()
        watcher.cancel()
        await producer.stop()
        await app.stop()


async def _live_and_restart(ctx: BenchContext) -> list[Figure]:
    settings = await ctx.fresh_settings(topic_partitions=4)
    await ensure_topics(settings)
    load = LiveLoad(settings)
    log = ctx.workdir / f"projector-{settings.topic_namespace.strip('.')}.log"
    proc = start_projector(settings, log)
    stop = asyncio.Event()
    committed: dict[tuple[int, int], float] = {}
    raw_seen: dict[tuple[int, int], float] = {}
    delta_seen: dict[int, float] = {}

    def on_feed(r, now):
        raw_seen[(r.partition, r.offset)] = now

    def on_delta(r, now):
        delta_seen.setdefault(to_us(decode_envelope(r.value).source_ts), now)

    watchers = [
        asyncio.create_task(_watch_tracking(settings, load.topic, committed, stop)),
        asyncio.create_task(_watch_topic(settings, load.topic, on_feed, stop)),
        asyncio.create_task(_watch_topic(settings, topic_name("live", WIRE_DELTAS, settings.topic_namespace),
                                         on_delta, stop)),
    ]
    producer = make_producer(settings, linger_ms=0)
    await producer.start()
    figures: list[Figure] = []
    try:
        if await _wait_for(log, "resuming at the tracked offsets", 60) is None:
            raise RuntimeError("the projector did not hand over to faust: " + log.read_text()[-2000:])
        await asyncio.sleep(1.0)
        await load.run(producer, LIVE_SECONDS, RATE)
        await asyncio.sleep(2.0)
        sent = dict(load.sent)
        commit_lat = [(committed[k] - t) * 1000 for k, t in sent.items() if k in committed]
        raw_lat = [(raw_seen[k] - t) * 1000 for k, t in sent.items() if k in raw_seen]
        delta_lat = [(delta_seen[us] - t) * 1000 for us, t in load.by_ts.items() if us in delta_seen]
        note = f"{len(sent)} events at {RATE}/s over {LIVE_SECONDS} s, 4 partitions; {len(delta_lat)} deltas"
        for q, label in ((0.5, "p50"), (0.99, "p99")):
            base = _percentile(raw_lat, q)
            figures.append(Figure(f"live latency {label}: append -> committed read model",
                                  _percentile(commit_lat, q), "ms", f"append -> plain consumer receipt {label}",
                                  base, "p99 <= 50 ms" if label == "p99" else None, note))
            figures.append(Figure(f"live latency {label}: append -> delta on wire.deltas",
                                  _percentile(delta_lat, q), "ms", f"append -> plain consumer receipt {label}",
                                  base, "p99 <= 50 ms" if label == "p99" else None, note))

        # restart: kill under load, a burst piles up, start again, time to within 10,000 of the head
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        background = asyncio.create_task(load.run(producer, 30, RATE))
        await load.burst(producer, BURST)
        restart_log = ctx.workdir / f"restart-{settings.topic_namespace.strip('.')}.log"
        started = time.perf_counter()
        proc = start_projector(settings, restart_log)
        startup = None
        within = None
        conn = await connect(settings.database_url)
        try:
            while time.perf_counter() - started < 60:
                if startup is None and "projector running" in (restart_log.read_text() if restart_log.exists() else ""):
                    startup = time.perf_counter() - started
                ends = await _ends(settings, load.topic)
                applied = {r["partition"]: r["last_offset"] + 1 for r in await conn.fetch(
                    "SELECT partition, last_offset FROM live.tracking WHERE topic = $1", load.topic)}
                lag = sum(end - applied.get(p, 0) for p, end in ends.items())
                if lag <= WITHIN:
                    within = time.perf_counter() - started
                    break
                await asyncio.sleep(0.05)
        finally:
            await conn.close()
        background.cancel()
        figures.append(Figure(
            f"restart: SIGKILL -> within {WITHIN:,} events of the head", within if within is not None else float("nan"),
            "s", "process start-up share (until `projector running`)", startup, "< 10 s",
            f"{BURST:,}-event backlog appended while it was down, {RATE}/s continuing",
        ))
    finally:
        stop.set()
        for w in watchers:
            w.cancel()
        await producer.stop()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except Exception:
            proc.kill()
    return figures


async def _ends(settings, topic: str) -> dict[int, int]:
    consumer = make_consumer(settings, fetch_max_wait_ms=20)
    await consumer.start()
    try:
        tps = [TopicPartition(topic, p) for p in range(settings.topic_partitions)]
        return {p: end for (_, p), end in (await high_watermarks(consumer, tps)).items()}
    finally:
        await consumer.stop()


async def run(ctx: BenchContext) -> list[Figure]:
    settings = await ctx.fresh_settings(topic_partitions=4)
    await ensure_topics(settings)
    started = time.perf_counter()
    total = await _season_log(settings)
    print(f"   season log: {total:,} events appended in {time.perf_counter() - started:.1f}s", flush=True)
    raw = max([await _raw_consume(settings, total) for _ in range(2)])
    print(f"   raw consume {raw:,.0f} events/s", flush=True)
    replay, applied = await _replay(settings)
    print(f"   replay {replay:,.0f} events/s", flush=True)
    figures = [Figure(
        "replay rate, season log (rebuild path into a scratch schema)", replay, "events/s",
        "raw aiokafka getmany, same topic", raw, ">= 0.25",
        f"{applied:,} events: {GAMES} games x {len(BOOKS)} books x 3 markets x {ROUNDS} rounds; 4 partitions",
    )]
    faust_lat, raw_lat = await _faust_floor(ctx)
    for q, label in ((0.5, "p50"), (0.99, "p99")):
        figures.append(Figure(
            f"faust floor {label}: append -> an agent that does nothing", _percentile(faust_lat, q), "ms",
            f"append -> plain consumer receipt {label}", _percentile(raw_lat, q), None,
            f"the live path's floor here: {RATE}/s, take_events(2000, 5 ms), same broker",
        ))
    figures += await _live_and_restart(ctx)
    return figures
