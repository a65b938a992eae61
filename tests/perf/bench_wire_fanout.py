"""Wire fan-out to thousands of sockets from one API process, against a bare `websockets`
broadcast server doing the same fan-out on the same machine in the same run (issue 26, target 1).

The served app (SVC_API_SERVER, h2corn unless set; one worker, tests/perf/api_bench_app.py) over the sample read models.
2,000 WebSocket clients (tests/perf/wire_clients.py, a process of their own) spread as real
clients are: 5 per loopback address (the per-address limit) and 100 per Scale account (the plan's
limit), 20 accounts; none is lifted. Each client subscribes to one game of an 8-game slate: the
game's topic and its market topics (a snapshot each), so each market topic has 250 readers.

Deltas are `market.update` envelopes (the market's stored header and main line as `data`, the
size of a real one), produced straight onto the dataset's `wire.deltas` with the next seqs of
their topics and `emit_ts` = the time of sending: the projector is not in this bench, only the
fan-out is. Offered at several rates, each for PHASE_SECONDS then DRAIN_SECONDS quiet; per rate:
messages delivered per second (deltas emitted in the phase that reached a client before the
clients stopped reading, over the phase's length) and receive - `emit_ts` p50/p99 of those.

The baseline (tests/perf/wire_baseline.py) reads the same topic with the same consumer settings
and sends every record to its topic's sockets with `websockets.broadcast`: no tickets, limits,
snapshots, seq checks or send queues. Same clients, same addresses, same rates, one after the
other. Then two API processes with the clients split between them (alternately), against one:
what a second process adds on the same cores, at one more rate (API_RATES: 320 deltas/s, 80,000
messages/s offered), since a second process can add only where one delivers less than is offered.
On this 2-core box it cannot double the rate, and the clients are part of why (measured 13:44-13:52
UTC today, load 11-18, 2,000 sockets, one rate per pair of runs): the API delivers about 66,000
messages per CPU second (one process at 320 deltas/s: 629,144 of 639,750 delivered on 9.5 CPU
seconds) and the clients' one process reads about 94,000 per CPU second (6.7 CPU seconds for those),
so one process at full speed already takes ~1.7 of the 2 cores with its clients; two sharing the
2 cores with the clients top out near 2 / (1/66,000 + 1/94,000) = 77,500 messages/s, about 1.2x one,
and the clients' single process caps any server at about 94,000. Under load the figure is bounded
by the CPU share the scheduler gives the bench's session instead (autogroup: every process it
starts shares one share, docs/benchmarks.md), which swings several-fold within minutes: one process
delivered 16,104 msg/s at 80 deltas/s and 78,460 at 320 five minutes later; at 320 and 640 (14:00,
load 10-14) two processes delivered 0.95x and 0.67x of one, servers and clients together getting
0.8-0.9 of a core either way: with no more CPU, a second process only adds its own fan-out's
cost (its consumer, its copy of every delta). The clients' process was not the bottleneck in any
of these runs (0.09-0.48 cores over a rate's phase and drain). A 2x needs the clients
on other cores (or machines) than the servers, and a core per server. The figure's note prints the
servers' and the clients' CPU (`server_cores`, `client_cores`) so that each run says which was short.
Then every third socket stalled (it never reads after subscribing) at STALLED_RATE: the p99 of
the readers that keep up, against the same rate with none stalled, on the API and on the
baseline. Also: each server's resident memory per open socket (RSS with the sockets open and
subscribed, idle, minus RSS before), in two rounds on one process: first the 2,000 sockets open
on a fresh process (the figure this bench always reported: it includes the growth of Python's and
the allocator's pools, which closing does not give back) and are closed; then they open again
on the same, now warm process for the rates (what more the process needs to hold them a second
time). Both servers are measured the same way. And the messages each delivered per CPU second it used.

A plot (docs/bench_wire_fanout.png: delivered rate and p99 against the offered rate, both servers) is
drawn when matplotlib is installed (`pip install -e '.[bench]'`, which `make bench` does).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from datetime import datetime, timezone

import asyncpg
import httpx
import psutil

from access.plans import PLANS
from infra.kafka import make_producer
from infra.net import free_port
from infra.topics import ensure_topics
from schemas.datasets import WIRE_DELTAS, topic_name
from schemas.wire import Envelope, encode_envelope
from tests.perf.run import ROOT, BenchContext, Figure
from tests.support.api_fixtures import make_key
from tests.support.projection_harness import project
from tests.support.sample_fold import sample_events
from tests.support.live_server import api_process
from tests.support.processes import stop
from wire.limits import PER_ADDRESS

KEY_SECRET = "bench-secret"
SOCKETS = int(os.environ.get("SVC_BENCH_WIRE_SOCKETS", "2000"))
PER_ACCOUNT = PLANS["scale"].wire_connections  # 100: the Scale plan's open sockets per account
GAMES = 8  # the slate
RATES = (10, 20, 40, 80)  # deltas/s offered onto wire.deltas (x 250 readers per topic)
# the API's rates, one process and two: one more, past what one process delivers on a core (about 66,000
# messages/s); at 10-40 it delivers everything offered, so a second process cannot add: 1.00 by construction
API_RATES = (*RATES, 320)
PHASE_SECONDS = 8.0
DRAIN_SECONDS = 6.0  # quiet after each rate: its backlog is worked off before the next (counted by emit_ts)
STALLED_RATE = 20  # deltas/s while a third of the sockets stall (one of RATES: compared with it)
READY_SECONDS = 600  # opening every socket (tickets, snapshots) must finish within this
PLOT = ROOT / "docs" / "bench_wire_fanout.png"


def _address(i: int) -> str:
    """The i-th client's loopback address: PER_ADDRESS clients on each."""
    n = i // PER_ADDRESS
    return f"127.1.{n // 250}.{n % 250 + 1}"


def _tree(pids: list[int]) -> list[psutil.Process]:
    """Processes and their children (granian serves from a worker process)."""
    procs = [psutil.Process(pid) for pid in pids]
    return [q for p in procs for q in (p, *p.children(recursive=True))]


def _rss(pids: list[int]) -> int:
    """Resident bytes of the processes and their children."""
    return sum(p.memory_info().rss for p in _tree(pids))


def _cpu(pids: list[int]) -> float:
    """CPU seconds (user + system) of the processes and their children so far."""
    return sum(sum(p.cpu_times()[:2]) for p in _tree(pids))


def gc_passes(base: str) -> dict[int, dict]:
    """The API process's collector passes so far (infra/gcwatch.py on /metrics), by generation:
    count, seconds in all, and count per histogram bucket (cumulative, by upper bound)."""
    out: dict[int, dict] = {g: {"count": 0, "sum": 0.0, "le": {}} for g in range(3)}
    for line in httpx.get(f"{base}/metrics", timeout=30).text.splitlines():
        if not line.startswith("svc_gc_pause_seconds_"):
            continue
        series, value = line.rsplit(" ", 1)
        labels = dict(kv.split("=") for kv in series[series.index("{") + 1:-1].split(","))
        row = out[int(labels['generation'].strip('"'))]
        if series.startswith("svc_gc_pause_seconds_bucket"):
            row["le"][float(labels["le"].strip('"'))] = float(value)
        else:
            row[series[len("svc_gc_pause_seconds_"):series.index("{")]] = float(value)
    return out


def gc_between(before: dict[int, dict], after: dict[int, dict]) -> dict[int, dict]:
    """Passes between two `gc_passes`: count, seconds, and the longest's bucket (upper bound)."""
    between = {}
    for g in after:
        passes = after[g]["count"] - before[g]["count"]
        # the smallest bound under which every pass between falls (the buckets are cumulative)
        holds_all = [le for le, n in after[g]["le"].items() if n - before[g]["le"].get(le, 0) == passes]
        between[g] = {"passes": passes, "seconds": after[g]["sum"] - before[g]["sum"],
                      "longest_at_most": min(holds_all) if passes and holds_all else 0.0}
    return between


def _ws(base: str) -> str:
    return base.replace("http://", "ws://") + "/v1/wire"


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


async def _slate(conn: asyncpg.Connection) -> list[tuple[str, int, list[tuple[str, int, dict]]]]:
    """GAMES games with markets: (game id, last seq, [(market id, last seq, delta data)])."""
    rows = await conn.fetch(
        "SELECT g.id, g.last_seq FROM live.games g WHERE EXISTS (SELECT 1 FROM live.markets m WHERE m.game_id = g.id) "
        "ORDER BY g.kickoff_at NULLS LAST, g.id LIMIT $1", GAMES)
    slate = []
    for g in rows:
        markets = []
        for m in await conn.fetch("SELECT * FROM live.markets WHERE game_id = $1 ORDER BY id", g["id"]):
            lines = await conn.fetch("SELECT line_key, point, is_main, books, hold, outcomes::text AS outcomes "
                                     "FROM live.market_lines WHERE market_id = $1 AND is_main", m["id"])
            data = {
                "market_id": m["id"], "game_id": m["game_id"], "kind": m["kind"], "type": m["type"],
                "period": m["period"], "participant_id": m["participant_id"], "name": m["name"],
                "status": m["status"], "reason": None,
                "main_point": None if m["main_point"] is None else float(m["main_point"]), "books": m["books"],
                "lines": [{"key": r["line_key"], "point": None if r["point"] is None else float(r["point"]),
                           "is_main": r["is_main"], "books": r["books"], "hold": r["hold"],
                           "outcomes": json.loads(r["outcomes"])} for r in lines],
                "removed_lines": [],
            }
            markets.append((m["id"], m["last_seq"], data))
        slate.append((g["id"], g["last_seq"], markets))
    if len(slate) < GAMES:
        raise RuntimeError(f"the sample has {len(slate)} games with markets, the bench wants {GAMES}")
    return slate


class Deltas:
    """market.update envelopes for the slate's market topics, round robin, seqs continuing the
    read models' (a client's snapshot seq + 1, + 2, ...)."""

    def __init__(self, settings, slate) -> None:
        self.topic = topic_name("live", WIRE_DELTAS, settings.topic_namespace)
        self.markets = [(f"market:{mid}", data) for _, _, markets in slate for mid, _, data in markets]
        self.seqs = {f"market:{mid}": seq for _, _, markets in slate for mid, seq, _ in markets}
        self.producer = make_producer(settings, linger_ms=1)  # as the projector's outbox relay sends
        self.n = 0

    async def settle(self, database_url: str) -> None:
        """Bring the read models' seqs to the deltas sent so far, as the projector would have: the
        next run's snapshots then say the seq its first delta follows (a gap would resnapshot)."""
        conn = await asyncpg.connect(database_url)
        try:
            await conn.executemany("UPDATE live.markets SET last_seq = $2 WHERE id = $1",
                                   [(topic.removeprefix("market:"), seq) for topic, seq in self.seqs.items()])
        finally:
            await conn.close()

    async def offer(self, rate: float, seconds: float) -> int:
        """Send `rate` deltas a second for `seconds`; returns how many were sent."""
        started = time.perf_counter()
        sent = 0
        futures = []
        while (elapsed := time.perf_counter() - started) < seconds:
            due = int(elapsed * rate) + 1
            while sent < due:
                topic, data = self.markets[self.n % len(self.markets)]
                self.n += 1
                self.seqs[topic] += 1
                now = datetime.now(timezone.utc)
                envelope = Envelope(op="delta", type="market.update", topic=topic, seq=self.seqs[topic],
                                    source_ts=now, emit_ts=now, source="The Odds API", data=data)
                futures.append(await self.producer.send(self.topic, encode_envelope(envelope), key=topic.encode()))
                sent += 1
            await asyncio.sleep(0.005)
        await asyncio.gather(*futures)
        return sent


@asynccontextmanager
async def _clients(ctx: BenchContext, label: str, plan: dict):
    """tests/perf/wire_clients.py in its own process on `plan` (URL, server, API key kind and one row
    per connection): yields it once every client has opened and subscribed, with the seconds that
    took; on leaving, its input closes (the clients write their figures and exit) and it is waited
    for, or killed if it fails. Its figures are then in wire-<label>-out.json."""
    plan_path = ctx.workdir / f"wire-{label}-plan.json"
    plan_path.write_text(json.dumps(plan))
    clients = subprocess.Popen([sys.executable, "-m", "tests.perf.wire_clients", "--plan", str(plan_path), "--out",
                                str(ctx.workdir / f"wire-{label}-out.json")], cwd=ROOT, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=open(ctx.workdir / f"wire-{label}-clients.log", "wb"))
    try:
        opened_at = time.monotonic()
        line = await asyncio.wait_for(asyncio.to_thread(clients.stdout.readline), READY_SECONDS)
        if not line.startswith(b"ready"):
            raise RuntimeError(f"{label}: clients did not open: {line!r}; see {ctx.workdir}/wire-{label}-clients.log")
        yield clients, time.monotonic() - opened_at
        clients.stdin.close()
        await asyncio.to_thread(clients.wait, 120)
    finally:
        if clients.poll() is None:
            clients.kill()
            clients.wait()


async def open_idle(ctx: BenchContext, label: str, url: str, api: str | None, pids: list[int],
                    plan_rows: list[dict], while_open=None) -> dict:
    """The clients open and subscribe (snapshots, acks), stay idle a second, then close: the
    servers' RSS before, open and after, per socket (KiB). The first round of `run`'s memory
    figures; `_measure`'s own opening is then the second. `while_open`: a coroutine function awaited
    once they are open and measured (tests/perf/wire_memory_probe.py's tracemalloc snapshot)."""
    before = _rss(pids)
    async with _clients(ctx, label, {"url": url, "server": "api" if api else "baseline", "api": api,
                                     "connections": plan_rows}):
        await asyncio.sleep(1)
        opened = _rss(pids)
        if while_open is not None:
            await while_open()
    await asyncio.sleep(3)  # every socket closed and counted out
    n = len(plan_rows)
    return {"kib_per_socket": (opened - before) / 1024 / n, "kept_kib_per_socket": (_rss(pids) - before) / 1024 / n}


async def _measure(ctx: BenchContext, name: str, url: str, api: str | None, pids: list[int], plan_rows: list[dict],
                   deltas: Deltas, readers: int, label: str | None = None, rates: tuple[int, ...] = RATES) -> dict:
    label = label or name
    before = _rss(pids)
    async with _clients(ctx, label, {"url": url, "server": name, "api": api, "connections": plan_rows}) as (clients, open_seconds):
        await asyncio.sleep(1)
        after = _rss(pids)
        cpu_before = _cpu(pids), _cpu([clients.pid])
        gc_before = gc_passes(api) if api else None
        wall = time.monotonic()
        phases = []
        for rate in rates:
            t0 = time.time()
            sent = await deltas.offer(rate, PHASE_SECONDS)
            phases.append((rate, t0, time.time(), sent))
            await asyncio.sleep(DRAIN_SECONDS)  # a backlog left by one rate is not the next one's
        wall = time.monotonic() - wall
        # on a shared box a server may get less than a core: what it delivers per CPU second it got
        # does not depend on how much it got
        busy = [(b - a) / wall for a, b in zip(cpu_before, (_cpu(pids), _cpu([clients.pid])))]
        gc = gc_between(gc_before, gc_passes(api)) if gc_before else None
    result = json.loads((ctx.workdir / f"wire-{label}-out.json").read_text())
    rows = result["deltas"]
    pairs = [(rows[i], rows[i + 1]) for i in range(0, len(rows), 2)]
    by_phase = []
    for rate, t0, t1, sent in phases:
        lat = [ms for emitted, ms in pairs if t0 <= emitted < t1]  # emit_ts: stamped within the phase
        by_phase.append({"rate": rate, "seconds": t1 - t0, "sent": sent, "expected": sent * readers,
                         "delivered": len(lat), "per_second": len(lat) / (t1 - t0),
                         "p50": _pct(lat, 0.50), "p99": _pct(lat, 0.99)})
    return {"phases": by_phase, "closed": result["closed"], "kib_per_socket": (after - before) / 1024 / len(plan_rows),
            "open_seconds": open_seconds, "server_cores": busy[0], "client_cores": busy[1],
            "per_cpu_second": sum(p["delivered"] for p in by_phase) / max(1e-9, busy[0] * wall),
            "closed_codes": sorted(set(result["closed"])), "gc": gc}


def _plot(api: dict, two: dict, base: dict) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for label, result, style in (("API (one process)", api, "o-"), ("API (two processes)", two, "^-"),
                                 ("websockets broadcast baseline", base, "s--")):
        offered = [p["expected"] / p["seconds"] for p in result["phases"]]
        left.plot(offered, [p["per_second"] for p in result["phases"]], style, label=label)
        right.plot(offered, [p["p99"] for p in result["phases"]], style, label=label)
    left.set(xlabel="messages/s offered (deltas/s x readers)", ylabel="messages/s delivered",
             title=f"Wire fan-out, {SOCKETS} sockets")
    right.set(xlabel="messages/s offered", ylabel="receive - emit_ts p99 (ms)", title="delivery p99")
    right.set_yscale("log")
    for ax in (left, right):
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.text(0.01, 0.01, f"{os.cpu_count()} cores, {psutil.virtual_memory().total / 2**30:.0f} GiB; one run, shared box",
             fontsize=7)
    fig.tight_layout()
    fig.savefig(PLOT, dpi=100)
    plt.close(fig)
    return True


async def prepare(ctx: BenchContext, sockets: int, key_prefix: str) -> tuple:
    """A fresh stack's topics and the sample season's read models, and one plan row per socket:
    its loopback address (PER_ADDRESS a source address), its account's key (PER_ACCOUNT sockets an
    account) and its topics (a slate game's topic and its market topics, the games in turn).
    Returns (settings, slate, plan rows); the probes (gc_probe, wire_memory_probe) use it too."""
    settings = await ctx.fresh_settings(key_secret=KEY_SECRET)
    await ensure_topics(settings)
    conn = await asyncpg.connect(settings.database_url)
    try:
        await project(settings, conn, sample_events(), "live")
        slate = await _slate(conn)
        keys = [await make_key(settings.database_url, f"{key_prefix}-{a}", {"read:odds", "wire:connect"},
                               secret=KEY_SECRET) for a in range(-(-sockets // PER_ACCOUNT))]
    finally:
        await conn.close()
    plan_rows = []
    for i in range(sockets):
        game_id, _, markets = slate[i % GAMES]
        plan_rows.append({"address": _address(i), "key": keys[i // PER_ACCOUNT],
                          "topics": [f"game:{game_id}", *(f"market:{mid}" for mid, _, _ in markets)]})
    return settings, slate, plan_rows


async def run(ctx: BenchContext) -> list[Figure]:
    settings, slate, plan_rows = await prepare(ctx, SOCKETS, "fanout")
    readers = SOCKETS // GAMES
    deltas = Deltas(settings, slate)
    await deltas.producer.start()
    try:
        env = {"KAFKA_BOOTSTRAP": settings.kafka_bootstrap, "SVC_TOPIC_NAMESPACE": settings.topic_namespace}
        with api_process(settings.database_url, settings.data_dir, KEY_SECRET, ctx.workdir / "wire-api.log",
                         app="tests.perf.api_bench_app:app", **env) as (base, proc):
            api_first = await open_idle(ctx, "api-first", _ws(base), base, [proc.pid], plan_rows)
            api = await _measure(ctx, "api", _ws(base), base, [proc.pid], plan_rows, deltas, readers, rates=API_RATES)
        # two API processes, the same clients split between them (alternately)
        await deltas.settle(settings.database_url)
        with api_process(settings.database_url, settings.data_dir, KEY_SECRET, ctx.workdir / "wire-api-a.log",
                         app="tests.perf.api_bench_app:app", **env) as (base_a, proc_a), \
                api_process(settings.database_url, settings.data_dir, KEY_SECRET, ctx.workdir / "wire-api-b.log",
                            app="tests.perf.api_bench_app:app", **env) as (base_b, proc_b):
            split = [{**row, "url": _ws((base_a, base_b)[i % 2])} for i, row in enumerate(plan_rows)]
            two = await _measure(ctx, "api", _ws(base_a), base_a, [proc_a.pid, proc_b.pid], split, deltas, readers,
                                 label="api-two", rates=API_RATES)
        # a third of the sockets stalled (never read): what the readers that keep up see
        await deltas.settle(settings.database_url)
        stalled_rows = [{**row, "stall": i % 3 == 2} for i, row in enumerate(plan_rows)]
        with api_process(settings.database_url, settings.data_dir, KEY_SECRET, ctx.workdir / "wire-api-stalled.log",
                         app="tests.perf.api_bench_app:app", **env) as (base, proc):
            api_stalled = await _measure(ctx, "api", _ws(base), base, [proc.pid], stalled_rows, deltas, readers,
                                         label="api-stalled", rates=(STALLED_RATE,))
        port = free_port()
        baseline = subprocess.Popen(
            [sys.executable, "-m", "tests.perf.wire_baseline", "--bootstrap", settings.kafka_bootstrap, "--topic",
             deltas.topic, "--port", str(port)], cwd=ROOT, stdout=subprocess.PIPE,
            stderr=open(ctx.workdir / "wire-baseline.log", "wb"))
        try:
            line = await asyncio.wait_for(asyncio.to_thread(baseline.stdout.readline), 60)
            if not line.startswith(b"ready"):
                raise RuntimeError(f"baseline server did not start; see {ctx.workdir}/wire-baseline.log")
            base_first = await open_idle(ctx, "baseline-first", f"ws://127.0.0.1:{port}", None, [baseline.pid],
                                         plan_rows)
            base = await _measure(ctx, "baseline", f"ws://127.0.0.1:{port}", None, [baseline.pid], plan_rows, deltas,
                                  readers)
            base_stalled = await _measure(ctx, "baseline", f"ws://127.0.0.1:{port}", None, [baseline.pid],
                                          stalled_rows, deltas, readers, label="baseline-stalled",
                                          rates=(STALLED_RATE,))
        finally:
            stop(baseline)
    finally:
        await deltas.producer.stop()

    plotted = _plot(api, two, base)
    machine = f"{os.cpu_count()} cores, {psutil.virtual_memory().total / 2**30:.0f} GiB"
    figures = []
    for a, b in zip(two["phases"], api["phases"]):
        figures.append(Figure(f"two API processes: delivered, {a['rate']} deltas/s x {readers} readers",
                              a["per_second"], "msg/s", "one API process, same load", b["per_second"], "2.0",
                              f"p99 {a['p99']:.0f} ms (one process {b['p99']:.0f} ms); delivered {a['delivered']}/"
                              f"{a['expected']} (one process {b['delivered']}); CPU over the rates: servers "
                              f"{two['server_cores']:.2f} cores (one process {api['server_cores']:.2f}), clients "
                              f"{two['client_cores']:.2f} ({api['client_cores']:.2f}), of {os.cpu_count()}"))
    for a, b in zip(api["phases"], base["phases"]):
        what = f"{a['rate']} deltas/s x {readers} readers"
        note = (f"{SOCKETS} sockets, {PHASE_SECONDS:.0f}s; delivered {a['delivered']}/{a['expected']} "
                f"(baseline {b['delivered']}/{b['expected']}); {machine}, shared")
        figures.append(Figure(f"fan-out delivered, {what}", a["per_second"], "msg/s", "websockets broadcast, same load",
                              b["per_second"], ">= 0.5", note))
        figures.append(Figure(f"fan-out p99 receive - emit_ts, {what}", a["p99"], "ms",
                              "websockets broadcast p99", b["p99"], "<= 100 ms",
                              f"p50 {a['p50']:.1f} ms (baseline {b['p50']:.1f} ms)"))
    figures.append(Figure(f"resident memory per open socket ({SOCKETS}, subscribed, idle; first round: fresh process)",
                          api_first["kib_per_socket"], "KiB", "websockets broadcast server, same", base_first["kib_per_socket"],
                          None, f"closed, the process kept {api_first['kept_kib_per_socket']:.1f} KiB a socket "
                          f"(baseline {base_first['kept_kib_per_socket']:.1f}): its pools, reused by the second round"))
    figures.append(Figure(f"resident memory per open socket ({SOCKETS}, subscribed, idle; warm: second round)",
                          api["kib_per_socket"], "KiB", "websockets broadcast server, same", base["kib_per_socket"],
                          "<= 20 KiB", f"the same process after the first round; opening took "
                          f"{api['open_seconds']:.0f}s (tickets, snapshots) vs {base['open_seconds']:.0f}s"))
    at = RATES.index(STALLED_RATE)
    for name, stalled, free in (("API (one process)", api_stalled, api), ("websockets broadcast", base_stalled, base)):
        s, f = stalled["phases"][0], free["phases"][at]
        figures.append(Figure(f"{name}: readers that keep up, p99 with a third of the sockets stalled", s["p99"], "ms",
                              "same server and rate, none stalled", f["p99"], "<= 100 ms",
                              f"{STALLED_RATE} deltas/s; p50 {s['p50']:.1f} ms (none stalled {f['p50']:.1f} ms); "
                              f"{s['delivered']} delivered; readers closed early: "
                              f"{'; '.join(stalled['closed_codes'])[:80] or 'none'}"))
    full, young = api["gc"][2], api["gc"][0]
    figures.append(Figure("API: full collector passes while the rates were offered, longest", full["longest_at_most"] * 1000,
                          "ms (bucket)", None, None, None,
                          f"{full['passes']:.0f} full passes, {full['seconds'] * 1000:.0f} ms in all; generation 0: "
                          f"{young['passes']:.0f} passes, {young['seconds'] * 1000:.0f} ms (svc_gc_pause_seconds)"))
    figures.append(Figure("messages delivered per CPU second of the server (all rates)", api["per_cpu_second"],
                          "msg/cpu-s", "websockets broadcast server", base["per_cpu_second"], None,
                          "independent of how much of the shared cores each server got"))
    figures.append(Figure("CPU while the rates were offered (server process)", api["server_cores"], "cores",
                          "websockets broadcast server", base["server_cores"], None,
                          f"the clients' process: {api['client_cores']:.2f} cores against the API, "
                          f"{base['client_cores']:.2f} against the baseline"))
    closed = len(api["closed"]) + len(two["closed"]) + len(base["closed"])
    if closed:
        figures.append(Figure("sockets closed during the run (one API process)", len(api["closed"]), "sockets",
                              "baseline", len(base["closed"]), "0",
                              f"two API processes: {len(two['closed'])}; " +
                              "; ".join(sorted(set(api["closed"] + two["closed"] + base["closed"])))[:120]))
    if plotted:
        figures[0].note += f"; plot {PLOT.relative_to(ROOT)}"
    return figures
