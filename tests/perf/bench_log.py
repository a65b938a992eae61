"""The kept log of the embedded stack (docs/log.md): what keeping it costs and how fast it is back.

- ingest through the log keeper (each produce synced to the copy before it is acknowledged)
  over a raw aiokafka produce of the same encoded events to a bare broker: target >= 0.5; and
  over the same ingest into the bare broker (the keeper's own cost);
- restore: records per second put back into a new broker from the copy, over the same raw
  produce rate;
- `svc up` to healthy on a data dir whose log holds LOG_EVENTS events (`SVC_BENCH_LOG_EVENTS`,
  default 1,000,000), over the same restart with an empty log. (The projector then resumes
  from its tracking rows; the e2e tests show it does not rebuild.)
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import msgspec

from infra.broker import start_broker
from infra.kafka_protocol import Client
from infra.log_copy import LogCopy
from infra.log_keeper import restore
from infra.net import free_port, wait_port
from infra.topics import ensure_topics
from ingest import odds_api
from ingest.event_log import open_event_log
from ingest.pipeline import ingest
from tests.perf.bench_ingest import BOOKS, GAMES, _ingest_once, _raw_once, ingest_batches, odds_response
from tests.perf.run import BenchContext, Figure

ROUNDS = 3
LOG_EVENTS = int(os.environ.get("SVC_BENCH_LOG_EVENTS", "1000000"))


class Keeper:
    def __init__(self, data_dir: Path) -> None:
        self.port = free_port()
        self.proc = subprocess.Popen([sys.executable, "-m", "infra.log_keeper", "--data-dir", str(data_dir),
                                      "--port", str(self.port)], stderr=subprocess.DEVNULL)
        wait_port("127.0.0.1", self.port, 60, lambda: self.proc.poll() is None)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(60)


async def _kept_ingest_once(ctx: BenchContext, path: Path, data_dir: Path):
    keeper = Keeper(data_dir)
    try:
        settings = await ctx.fresh_settings(kafka_bootstrap=f"127.0.0.1:{keeper.port}")
        await ensure_topics(settings, ("live",))
        async with open_event_log(settings, "live") as log:
            summary = await ingest(odds_api.parse(path, datetime.now(timezone.utc)), log)
        assert summary.dead_lettered == 0 and summary.accepted == summary.events, summary
        return summary
    finally:
        keeper.stop()


async def _restore_rate(ctx: BenchContext, data_dir: Path) -> tuple[float, int]:
    proc, port = start_broker(log_path=ctx.workdir / "restore-tansu.log")
    copy = LogCopy.open(data_dir)
    try:
        client = await Client.connect("127.0.0.1", port)
        started = time.perf_counter()
        ends = await restore(copy, client)
        elapsed = time.perf_counter() - started
        await client.close()
        records = sum(ends.values())
        return records / elapsed, records
    finally:
        copy.close()
        proc.terminate()
        proc.wait(30)


# ---- svc up with a large log --------------------------------------------------------------------


def _odds_files(workdir: Path, events: int) -> list[Path]:
    """Generated Odds API files of distinct games (IDs and kickoffs shifted per file)."""
    base = msgspec.json.decode(odds_response())
    per_file = GAMES * BOOKS * 3 + GAMES  # a quote per game, book and market, and the game (measured: 73,232)
    paths = []
    for k in range(max(1, round(events / per_file))):
        games = []
        for game in base:
            kickoff = datetime.fromisoformat(game["commence_time"].replace("Z", "+00:00")) + timedelta(weeks=80 * k)
            games.append({**game, "id": f"{k:04x}{game['id'][4:]}",
                          "commence_time": kickoff.strftime("%Y-%m-%dT%H:%M:%SZ")})
        path = workdir / f"odds_{k:03d}.json"
        path.write_bytes(msgspec.json.encode(games))
        paths.append(path)
    return paths


async def _kept_log_of(ctx: BenchContext, data_dir: Path, events: int) -> int:
    """A data dir whose kept log holds about `events` events (ingested through a keeper)."""
    keeper = Keeper(data_dir)
    ingested = 0
    try:
        settings = await ctx.fresh_settings(kafka_bootstrap=f"127.0.0.1:{keeper.port}")
        await ensure_topics(settings)
        async with open_event_log(settings, "live") as log:
            for path in _odds_files(ctx.workdir, events):
                ingested += (await ingest(odds_api.parse(path, datetime.now(timezone.utc)), log)).accepted
                path.unlink()
    finally:
        keeper.stop()
    return ingested


class Up:
    """`svc up --no-sample` on a data dir, as a user runs it."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        env = {k: v for k, v in os.environ.items() if k not in ("KAFKA_BOOTSTRAP", "DATABASE_URL", "REDIS_URL")}
        env["SVC_DATA_DIR"] = str(data_dir)
        self.started = time.monotonic()
        self.log = open(data_dir.parent / f"{data_dir.name}-up.log", "ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "cli.main", "up", "--no-sample", "--port", str(self.port)],
                                     env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def healthy(self, timeout: float = 1800) -> float:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"svc up exited ({self.proc.returncode})"
            try:
                body = httpx.get(f"http://127.0.0.1:{self.port}/health", timeout=2).json()
                if body.get("ok") and body.get("db"):
                    return time.monotonic() - self.started
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise TimeoutError("not healthy")

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(300)
        self.log.close()


def _to_healthy(data_dir: Path) -> float:
    """The second start of `svc up` on the data dir (the first one also creates Postgres)."""
    up = Up(data_dir)
    try:
        up.healthy()
    finally:
        up.stop()
    up = Up(data_dir)
    try:
        return up.healthy()
    finally:
        up.stop()


async def run(ctx: BenchContext) -> list[Figure]:
    path = ctx.workdir / "odds_season.json"
    path.write_bytes(odds_response())
    batches = ingest_batches(path)  # the events as ingest batches and sends them, for the bare producer
    events = [e for b in batches for e in b]
    raws, bare, kept, data_dir = [], [], [], None
    for i in range(ROUNDS):  # the box is shared: alternate the three, best of each
        raws.append(await _raw_once(ctx, batches))
        bare.append((await _ingest_once(ctx, path))[0].events_per_second)
        data_dir = ctx.workdir / f"kept-{i}"
        kept.append((await _kept_ingest_once(ctx, path, data_dir)).events_per_second)
    restore_rates = []
    for _ in range(ROUNDS):
        rate, records = await _restore_rate(ctx, data_dir)
        restore_rates.append(rate)
    raw = max(raws)
    full, empty = ctx.workdir / "up-full", ctx.workdir / "up-empty"
    empty.mkdir()
    ingested = await _kept_log_of(ctx, full, LOG_EVENTS)
    copy = LogCopy.open(full, read_only=True)
    kept_records = sum(copy.records_per_topic().values())
    copy.close()
    base_health = await asyncio.to_thread(_to_healthy, empty)
    health = await asyncio.to_thread(_to_healthy, full)
    what = (f"{len(events):,} events of one Odds API file ({GAMES} games x {BOOKS} books); best of {ROUNDS}; "
            "the baseline: a bare aiokafka producer into tansu with no keeper, each ingest batch's events as record "
            "batches per partition, gathered, acks=all")
    scale = (f"{kept_records:,} records kept ({ingested:,} events ingested); restart of a stopped stack "
             "(Postgres created on the first start); healthy: GET /health ok, the log restored")
    if LOG_EVENTS < 1_000_000:
        scale += f"; a smaller log than 1,000,000 events (SVC_BENCH_LOG_EVENTS={LOG_EVENTS})"
    return [
        Figure("ingest through the log keeper (synced copy)", max(kept), "events/s",
               "raw aiokafka produce, same encoded events, bare broker", raw, ">= 0.5", what),
        Figure("ingest through the log keeper (synced copy)", max(kept), "events/s",
               "the same ingest into the bare broker", max(bare), None,
               "what keeping the log costs ingest, whatever the load on the box"),
        Figure("restore into a new broker", max(restore_rates), "records/s",
               "raw aiokafka produce, same encoded events, bare broker", raw, None,
               f"{records:,} records; kept batches merged up to 1 MiB; best of {ROUNDS}"),
        Figure("svc up to healthy, large kept log", health, "s",
               "svc up to healthy, empty log", base_health, None, scale),
    ]
