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
   by a plain consumer of a feed topic under the same load on the same broker, measured in the
   phase before (the faust floor), not beside the projector: on the embedded broker a second
   consumer polling the projector's partitions slowed the projector itself (p99 37 -> 69 ms
   in runs side by side), which no deployment has. With them, `drift`: the p99s of a run's last
   3 s over its first 3 s (the embedded broker slows as a partition's log grows).
3. Restart: SIGKILL the projector under that load, append a 50,000-event burst, start it
   again, and time until it is within 10,000 events of the head. Baseline: the share of that
   time the process needed to start (until it logged `projector running`).
4. Between 1 and 2, on the season log: the projector's memory over its catch-up of the whole log,
   then a sustained run at 2,000 events/s on it, p99 per minute (tests/perf/pipeline_hours.py;
   `--pipeline-minutes`, default 1, the issue's run is 10).

`--replay-only` (tests/perf/run.py) measures 1 alone: the phases after it take minutes and do not
change the replay figure.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from aiokafka import TopicPartition

from infra.db import connect
from infra.kafka import make_consumer, make_producer
from infra.topics import ensure_topics
from infra.aiokafka_adapter import partitions_of
from projections.log_ends import high_watermarks
from projections.rebuild import ScratchReplay, drop_schema, open_scratch
from schemas.datasets import FEED_GAMES, WIRE_DELTAS, topic_name
from schemas.events import encode
from tests.perf import pipeline_hours
from tests.perf.run import BenchContext, Figure
from tests.support import projection_events as ev
from tests.support.projection_harness import start_projector
from tests.support import processes

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


async def _replay(settings) -> tuple[float, int, str]:
    """The rebuild path (`ScratchReplay`, as `svc projections rebuild|verify` run it), from a
    fresh scratch schema to the end of the log; worker start-up included in the time."""
    conn = await connect(settings.database_url)
    try:
        scratch = await open_scratch(conn, settings, "live", publish=False)
        replay = ScratchReplay(scratch, conn, settings)
        try:
            started = time.perf_counter()
            await replay.to(None)
            await replay.close()
            elapsed = time.perf_counter() - started
            how = f"{len(replay.pool_sizes)} worker processes" if replay.pool_sizes else "in process"
            return replay.applied / elapsed, replay.applied, how
        finally:
            await replay.close()
            await drop_schema(conn, scratch.schema)
    finally:
        await conn.close()


# ---- live ---------------------------------------------------------------------------------------
# The load and every watcher run as processes of their own (tests/perf/live_probe.py), so no
# timestamp includes another's work.

ROOT = Path(__file__).resolve().parents[2]


class Probe:
    """A watcher process of live_probe: ready once listening; what it saw when told to finish."""

    def __init__(self, out: Path, *args: str) -> None:
        self.out = out
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.perf.live_probe", *args, "--out", str(out)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT, text=True)

    async def ready(self) -> None:
        line = await asyncio.to_thread(self.proc.stdout.readline)
        if "ready" not in line:
            raise RuntimeError(f"probe {self.out.name} did not start (exit {self.proc.poll()})")

    async def finish(self) -> dict[str, float]:
        self.proc.stdin.close()
        await asyncio.to_thread(self.proc.wait, 30)
        return json.loads(self.out.read_text())

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()


async def _load(settings, out: Path, seconds: float, rate: int, start: int = 0, burst: int = 0) -> list[list]:
    """Run the load process; [partition, offset, source_ts_us, sent_at] per event."""
    argv = [sys.executable, "-m", "tests.perf.live_probe", "load", "--bootstrap", settings.kafka_bootstrap,
            "--topic", topic_name("live", FEED_GAMES, settings.topic_namespace), "--rate", str(rate),
            "--seconds", str(seconds), "--start", str(start), "--burst", str(burst), "--out", str(out)]
    await asyncio.to_thread(subprocess.run, argv, cwd=ROOT, check=True)
    return json.loads(out.read_text())


def _latencies(sent: list[list], seen: dict[str, float], by_ts: bool = False) -> list[float]:
    out = []
    for partition, offset, us, t in sent:
        at = seen.get(str(us) if by_ts else f"{partition}:{offset}")
        if at is not None:
            out.append((at - t) * 1000)
    return out


async def _wait_for(path, text: str, timeout: float) -> float | None:
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        if path.exists() and text in path.read_text():
            return time.perf_counter() - started
        await asyncio.sleep(0.05)
    return None


async def _faust_floor(ctx: BenchContext) -> tuple[list[float], list[list], dict[str, float]]:
    """Latency of a faust agent that does nothing, same broker, same load: the floor of the
    live path, as faust is configured here. Also the broker's own latency under that load: what
    was sent, and when a plain consumer received each record."""
    import faust

    from projections.faust_adapter import broker_url
    from projections.faust_app import TAKE_MAX, TAKE_WITHIN

    settings = await ctx.fresh_settings()
    await ensure_topics(settings)
    topic = topic_name("live", FEED_GAMES, settings.topic_namespace)
    settings.data_dir.mkdir(parents=True, exist_ok=True)  # faust makes its datadir, not the parents
    app = faust.App(f"{settings.topic_namespace}floor", broker=broker_url(settings.kafka_bootstrap), web_enabled=False,
                    topic_disable_leader=True, topic_allow_declare=False, store="memory://",
                    broker_session_timeout=6, broker_heartbeat_interval=1, broker_rebalance_timeout=6,
                    consumer_auto_offset_reset="latest", autodiscover=False,
                    datadir=str(settings.data_dir / "faust-floor"))  # not `<app id>-data` in the checkout
    seen: dict[str, float] = {}

    async def agent(stream):
        async for events in stream.take_events(TAKE_MAX, within=TAKE_WITHIN):
            now = time.perf_counter()
            for e in events:
                seen[f"{e.message.partition}:{e.message.offset}"] = now

    app.agent(app.topic(topic, key_serializer="raw", value_serializer="raw"), name="floor")(agent)
    await app.start()
    raw = Probe(ctx.workdir / "floor-raw.json", "topic", "--bootstrap", settings.kafka_bootstrap, "--topic", topic)
    try:
        await raw.ready()
        await asyncio.sleep(2.0)
        sent = await _load(settings, ctx.workdir / "floor-load.json", LIVE_SECONDS, RATE)
        await asyncio.sleep(1.0)
        return _latencies(sent, seen), sent, await raw.finish()
    finally:
        raw.kill()
        await app.stop()


async def _live_and_restart(ctx: BenchContext, broker_lat: list[float]) -> list[Figure]:
    """`broker_lat`: append -> plain consumer receipt under the same load (the floor phase)."""
    settings = await ctx.fresh_settings()
    await ensure_topics(settings)
    topic = topic_name("live", FEED_GAMES, settings.topic_namespace)
    log = ctx.workdir / f"projector-{settings.topic_namespace.strip('.')}.log"
    proc = start_projector(settings, log)
    probes = [
        Probe(ctx.workdir / "live-deltas.json", "topic", "--bootstrap", settings.kafka_bootstrap, "--topic",
              topic_name("live", WIRE_DELTAS, settings.topic_namespace), "--deltas"),
        Probe(ctx.workdir / "live-tracking.json", "tracking", "--database-url", settings.database_url, "--schema",
              "live", "--topic", topic),
    ]
    figures: list[Figure] = []
    try:
        if await _wait_for(log, "resuming at the tracked offsets", 60) is None:
            raise RuntimeError("the projector did not hand over to faust: " + log.read_text()[-2000:])
        for probe in probes:
            await probe.ready()
        await asyncio.sleep(1.0)
        sent = await _load(settings, ctx.workdir / "live-load.json", LIVE_SECONDS, RATE)
        await asyncio.sleep(2.0)
        delta_seen, committed = [await probe.finish() for probe in probes]
        commit_lat = _latencies(sent, committed)
        delta_lat = _latencies(sent, delta_seen, by_ts=True)
        note = (f"{len(sent)} events at {RATE}/s over {LIVE_SECONDS} s, {settings.topic_partitions} partitions; "
                f"{len(commit_lat)} committed, {len(delta_lat)} deltas seen; load and watchers in processes of their "
                "own; baseline from the floor phase")
        for q, label in ((0.5, "p50"), (0.99, "p99")):
            base = _percentile(broker_lat, q)
            target = "p99 <= 50 ms" if label == "p99" else None
            for what, lat in (("committed read model", commit_lat), ("delta on wire.deltas", delta_lat)):
                figures.append(Figure(f"live latency {label}: append -> {what}", _percentile(lat, q), "ms",
                                      f"append -> plain consumer receipt {label} (floor phase)", base, target, note))

        figures.append(_drift("committed read model", sent, committed))

        # restart: kill under load, a burst piles up, start again, time to within 10,000 of the head
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        background = asyncio.create_task(
            _load(settings, ctx.workdir / "restart-load.json", 30, RATE, start=len(sent) + 1, burst=BURST))
        await _backlog(settings, topic, BURST)
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
                ends = await _ends(settings, topic)
                applied = {r["partition"]: r["last_offset"] + 1 for r in await conn.fetch(
                    "SELECT partition, last_offset FROM live.tracking WHERE topic = $1", topic)}
                lag = sum(end - applied.get(p, 0) for p, end in ends.items())
                if lag <= WITHIN:
                    within = time.perf_counter() - started
                    break
                await asyncio.sleep(0.05)
        finally:
            await conn.close()
        await background
        figures.append(Figure(
            f"restart: SIGKILL -> within {WITHIN:,} events of the head", within if within is not None else float("nan"),
            "s", "process start-up share (until `projector running`)", startup, "< 10 s",
            f"{BURST:,}-event backlog appended while it was down, {RATE}/s continuing",
        ))
    finally:
        for probe in probes:
            probe.kill()
        processes.stop(proc, wait=30)
    return figures


DRIFT_SECONDS = 3.0


def _drift(label: str, sent: list[list], seen: dict[str, float]) -> Figure:
    """p99 over the last seconds of a run against its first seconds. The embedded broker (tansu,
    memory storage) answers a fetch in time that grows with the partition's length, so the same
    load sees a slower broker as the run goes on; this shows how much, in each run."""
    first_at = sent[0][3]
    last_at = sent[-1][3]
    before = _latencies([e for e in sent if e[3] - first_at < DRIFT_SECONDS], seen)
    after = _latencies([e for e in sent if last_at - e[3] < DRIFT_SECONDS], seen)
    return Figure(
        f"drift: append -> {label} p99, last {DRIFT_SECONDS:.0f} s of the run", _percentile(after, 0.99), "ms",
        f"the same, first {DRIFT_SECONDS:.0f} s", _percentile(before, 0.99), None,
        f"{len(after)} and {len(before)} events; the broker's fetch cost grows with the log (docs/benchmarks.md)",
    )


async def _backlog(settings, topic: str, n: int) -> None:
    """Wait until the log holds at least `n` records more than the projector applied."""
    conn = await connect(settings.database_url)
    try:
        while True:
            ends = await _ends(settings, topic)
            applied = {r["partition"]: r["last_offset"] + 1 for r in await conn.fetch(
                "SELECT partition, last_offset FROM live.tracking WHERE topic = $1", topic)}
            if sum(end - applied.get(p, 0) for p, end in ends.items()) >= n:
                return
            await asyncio.sleep(0.05)
    finally:
        await conn.close()


async def _ends(settings, topic: str) -> dict[int, int]:
    consumer = make_consumer(settings, fetch_max_wait_ms=20)
    await consumer.start()
    try:
        tps = [TopicPartition(topic, p) for p in range(settings.topic_partitions)]
        return {p: end for (_, p), end in (await high_watermarks(consumer, tps)).items()}
    finally:
        await consumer.stop()


async def run(ctx: BenchContext) -> list[Figure]:
    settings = await ctx.fresh_settings()
    await ensure_topics(settings)
    started = time.perf_counter()
    total = await _season_log(settings)
    print(f"   season log: {total:,} events appended in {time.perf_counter() - started:.1f}s", flush=True)
    raw = max([await _raw_consume(settings, total) for _ in range(2)])
    print(f"   raw consume {raw:,.0f} events/s", flush=True)
    replay, applied, how = await _replay(settings)
    print(f"   replay {replay:,.0f} events/s ({how})", flush=True)
    figures = [Figure(
        "replay rate, season log (rebuild path into a scratch schema)", replay, "events/s",
        "raw aiokafka getmany, same topic", raw, ">= 0.5",
        f"{applied:,} events: {GAMES} games x {len(BOOKS)} books x 3 markets x {ROUNDS} rounds; "
        f"{settings.topic_partitions} partitions; replayed {how}",
    )]
    if ctx.replay_only:
        return figures
    memory, projector, _, projector_log = await pipeline_hours.catch_up_memory(ctx, settings, total)
    figures += memory
    figures += await pipeline_hours.sustained(ctx, settings, projector, projector_log, ctx.pipeline_minutes)
    faust_lat, floor_sent, raw_seen = await _faust_floor(ctx)
    raw_lat = _latencies(floor_sent, raw_seen)
    for q, label in ((0.5, "p50"), (0.99, "p99")):
        figures.append(Figure(
            f"faust floor {label}: append -> an agent that does nothing", _percentile(faust_lat, q), "ms",
            f"append -> plain consumer receipt {label}", _percentile(raw_lat, q), None,
            f"the live path's floor here: {RATE}/s, take_events(2000, 5 ms), same broker",
        ))
    figures.append(_drift("plain consumer receipt (floor phase)", floor_sent, raw_seen))
    figures += await _live_and_restart(ctx, raw_lat)
    return figures
