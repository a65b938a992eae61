"""The kept log of the embedded stack (docs/log.md): what keeping it costs and how fast it is back.

- ingest through the log keeper (each produce synced to the copy before it is acknowledged)
  over a raw aiokafka produce of the same encoded events to a bare broker: target >= 0.5; and
  over the same ingest into the bare broker (the keeper's own cost);
- restore: records per second put back into a new broker from the copy, over the same raw
  produce rate;
- `svc up` to healthy on a data dir whose log holds LOG_EVENTS events (`SVC_BENCH_LOG_EVENTS`,
  default 1,000,000), over the same restart with an empty log. (The projector then resumes
  from its tracking rows; the e2e tests show it does not rebuild.)
- fetch at the tail of a partition of FETCH_LONG record batches over the same fetch on one of
  FETCH_SHORT batches, through the keeper (served from its copy) and straight from tansu (what
  every fetch cost before the keeper served them: tansu lists each stored batch on a fetch).
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import msgspec

from infra.broker import start_broker
from aiokafka.protocol.fetch import FetchRequest_v11
from aiokafka.record.default_records import DefaultRecordBatchBuilder

from infra.kafka_protocol import Client, produce_request
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
FETCH_SHORT, FETCH_LONG = 2_000, 200_000  # one-record batches in the partition
FETCHES = 200
TANSU_FETCHES = 15  # ~0.8 s each on the long partition
LOG_EVENTS = int(os.environ.get("SVC_BENCH_LOG_EVENTS", "1000000"))


class Keeper:
    def __init__(self, data_dir: Path) -> None:
        self.port = free_port()
        self.log = data_dir.parent / f"{data_dir.name}-keeper.log"
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "infra.log_keeper", "--data-dir", str(data_dir),
                                          "--port", str(self.port)], stderr=out)
        wait_port("127.0.0.1", self.port, 60, lambda: self.proc.poll() is None)

    def broker_port(self) -> int:
        """tansu's private port, from the keeper's log line `listening on ... (broker on N)`."""
        deadline = time.monotonic() + 10
        while not (found := re.search(r"\(broker on (\d+)\)", self.log.read_text())):
            assert time.monotonic() < deadline, self.log.read_text()
            time.sleep(0.02)
        return int(found.group(1))

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


# ---- fetch on a long partition --------------------------------------------------------------


def _one_record_batch(i: int) -> bytes:
    builder = DefaultRecordBatchBuilder(2, 0, 0, -1, -1, -1, 1 << 20)
    builder.append(0, 1_700_000_000_000 + i, f"game-{i % 500}".encode(), b"x" * 200, [("event_id", str(i).encode())])
    return bytes(builder.build())


async def _tail_fetch_ms(client: Client, topic: str, end: int, fetches: int = FETCHES) -> float:
    """Median ms of a fetch of the partition's last record (as aiokafka asks: Fetch v11, 1 MiB)."""
    request = FetchRequest_v11(-1, 100, 1, 50 << 20, 0, 0, -1, [(topic, [(0, -1, end - 1, -1, 1 << 20)])], [], "")
    times = []
    for _ in range(fetches):
        started = time.perf_counter()
        response = await client.request(request)
        times.append(time.perf_counter() - started)
        assert response.topics[0][1][0][2] == end, response  # the high watermark
    return sorted(times)[len(times) // 2] * 1000


async def _fetch_costs(ctx: BenchContext, batches: int) -> tuple[float, float]:
    """(through the keeper, straight from tansu) median ms of a tail fetch on a partition of
    `batches` one-record batches, produced through the keeper (1,000 batches a request)."""
    data_dir = ctx.workdir / f"fetch-{batches}"
    keeper = Keeper(data_dir)
    try:
        client = await Client.connect("127.0.0.1", keeper.port)
        broker = await Client.connect("127.0.0.1", keeper.broker_port())
        topic = "fetch.bench"
        await client.create_topic(topic, 1)
        for start in range(0, batches, 1000):
            records = b"".join(_one_record_batch(i) for i in range(start, min(start + 1000, batches)))
            response = await client.request(produce_request([(topic, 0, records)]))
            assert response.topics[0][1][0][1] == 0, response
        ours, theirs = await _tail_fetch_ms(client, topic, batches), await _tail_fetch_ms(broker, topic, batches, TANSU_FETCHES)
        await client.close()
        await broker.close()
        return ours, theirs
    finally:
        keeper.stop()


async def run(ctx: BenchContext) -> list[Figure]:
    path = ctx.workdir / "odds_season.json"
    path.write_bytes(odds_response())
    batches = ingest_batches(path)  # the events as ingest batches and sends them, for the bare producer
    events = [e for b in batches for e in b]
    (short_ours, short_tansu), (long_ours, long_tansu) = [await _fetch_costs(ctx, n) for n in (FETCH_SHORT, FETCH_LONG)]
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
    fetch_what = (f"median of {FETCHES} fetches of a partition's last record (Fetch v11, 1 MiB), one partition of "
                  "one-record batches (~300 bytes) produced 1,000 a request; served from the keeper's copy")
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
        Figure(f"fetch the tail through the keeper, {FETCH_LONG:,} batches", long_ours, "ms",
               f"the same, {FETCH_SHORT:,} batches", short_ours, "~1 (flat)", fetch_what),
        Figure(f"fetch the tail from tansu directly, {FETCH_LONG:,} batches", long_tansu, "ms",
               f"the same, {FETCH_SHORT:,} batches", short_tansu, None,
               f"median of {TANSU_FETCHES}; what each fetch cost before the keeper served them; {FETCH_SHORT:,} batches: {short_tansu:.2f} ms "
               f"from tansu, {short_ours:.2f} ms through the keeper"),
    ]
