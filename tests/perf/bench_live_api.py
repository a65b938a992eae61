"""The read API while the sandbox plays (issue 26, target 3), each figure against a trivial route of
the same server measured in the same conditions of the same run.

The served app (SVC_API_SERVER, h2corn unless set; one worker, tests/perf/api_bench_app.py) over the sandbox day (`svc
sample load --no-live`, projected by `svc projector run` in its own process, as `svc up` runs it),
read with a test-mode key, while 500 Wire sockets listen to the sandbox slate. Routes:
`/v1/games`, `/v1/slate`, `/v1/games/{id}`, `/v1/markets/{id}`, `/v1/players/{id}` and
`/v1/search` (queries as people type them, misspelled included, taken in turn as one route).
Loads are 64 keep-alive clients (tests/perf/http_load.py, a process of its own) asking for gzip
as the Python client, browsers and `curl --compressed` do. Baseline: `GET /v1/bench/constant` on
the same server, through the same middleware, key check and metering (api_bench_app.py).

The listeners (tests/perf/wire_clients.py, a process of their own, readers that keep up) are
spread as real clients are: 5 per loopback address (100 addresses, the per-address limit), 100
per Scale account (5 test-mode accounts, the plan's limit), none lifted; each subscribes to one
game of the sandbox slate (its game topic and market topics), the games taken in turn. They are
open before the first load and read every delta until the last load ends; what they received,
its delay (receive - `emit_ts`) and any early close are reported with the figures.

Quiet (before play): the mix once, each connection taking the routes in turn. Then while `svc
sandbox play` replays the day (the projector writing the read models, deltas going out): the
constant route alone, each route alone, the constant route alone again, and the mix. A route's
throughput is its requests/s alone over the mean of the two constant loads around it; its p99 is
taken in the mix (every route waiting behind every other) and alone. The play is checked to have
lasted through every load. The serving process's CPU per request in the quiet and the played mix is
reported beside the mix's p99 (a figure the shared box's noise moves less than a p99).

Diagnostics: SVC_BENCH_PYSPY=1 samples the serving process during the played mix (py-spy);
SVC_BENCH_LOOPWATCH=<file> records every stretch over 5 ms in which the serving process's event loop
did not turn, with stacks, each load's start marked (`python -m tests.perf.loop_watch <file>
"played mix"` summarises one load; tests/perf/loop_watch.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import asyncpg
import httpx
import psutil

from access.plans import PLANS
from infra import channels
from infra.topics import ensure_topics
from schemas.datasets import pg_schema
from tests.perf.run import ROOT, BenchContext, Figure
from tests.support.api_fixtures import make_key
from tests.support.live_server import api_process
from tests.support.projection_harness import projector_env, start_projector
from wire.limits import PER_ADDRESS

KEY_SECRET = "bench-secret"
CONNECTIONS = 64
MIX_SECONDS = 8
ALONE_SECONDS = 5
WARMUP_SECONDS = 3
PLAY_SPEED = "600"  # the sandbox day (10.5 hours) in about a minute: long enough for both loads
SEARCHES = ("chiefs", "kansas cty", "eagels", "ravens", "buffalo bils")  # as people type them
SVC = [sys.executable, "-m", "cli.main"]
SOCKETS = 500  # Wire listeners during every load
PER_ACCOUNT = PLANS["scale"].wire_connections  # 100: the Scale plan's open sockets per account
READY_SECONDS = 300  # opening every socket (tickets, snapshots) must finish within this


def _load(urls: list[str], seconds: float, key: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "tests.perf.http_load", *urls, "--connections", str(CONNECTIONS), "--seconds",
         str(seconds), "--header", f"Authorization: Bearer {key}", "--header", "Accept-Encoding: gzip"],
        capture_output=True, text=True, check=True, cwd=ROOT,
    ).stdout
    return json.loads(out)


def _svc(env: dict, *args: str, timeout: float = 300) -> str:
    done = subprocess.run([*SVC, *args], env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    if done.returncode != 0:
        raise RuntimeError(f"svc {' '.join(args)}: {done.stdout[-500:]} {done.stderr[-1500:]}")
    return done.stdout


async def _routes(base: str, key: str) -> tuple[dict[str, str], list[dict]]:
    """The mix: a path per route, each checked to answer 200 first; and the sandbox slate."""
    async with httpx.AsyncClient(base_url=base, timeout=30, headers={"Authorization": f"Bearer {key}"}) as client:
        # no date: a test-mode key gets the sandbox's day, which sandbox play maps onto the wall clock
        slate = await client.get("/v1/slate", params={"tz": "America/New_York"})
        slate.raise_for_status()
        games = slate.json()["data"]
        game = next(g for g in games if g["markets"])
        player = await _a_player(client)
        routes = {
            "GET /v1/games": "/v1/games?limit=20",
            "GET /v1/slate": "/v1/slate?tz=America/New_York",
            "GET /v1/games/{id}": f"/v1/games/{game['id']}",
            "GET /v1/markets/{id}": f"/v1/markets/{game['markets'][0]['id']}",
            "GET /v1/players/{id}": f"/v1/players/{player}",
        }
        routes.update({f"GET /v1/search?q={q}": f"/v1/search?q={q.replace(' ', '+')}" for q in SEARCHES})
        for name, path in routes.items():
            r = await client.get(path)
            if r.status_code != 200:
                raise RuntimeError(f"{name}: {r.status_code} {r.text[:200]}")
    return routes, games


def _gc_pauses(base: str, key: str) -> dict[str, tuple[float, float, float]]:
    """The serving process's cycle-collector passes so far, from its /metrics (infra/gcwatch.py):
    generation -> (passes, seconds in all, longest pass in seconds)."""
    text = httpx.get(base + "/metrics", headers={"Authorization": f"Bearer {key}"}, timeout=30).text
    seen: dict[str, list[float]] = {}
    for line in text.splitlines():
        for name, at in (("svc_gc_pause_seconds_count", 0), ("svc_gc_pause_seconds_sum", 1),
                         ("svc_gc_pause_max_seconds", 2)):
            if line.startswith(name + "{"):
                generation = line.split('generation="', 1)[1].split('"', 1)[0]
                seen.setdefault(generation, [0.0, 0.0, 0.0])[at] = float(line.rsplit(" ", 1)[1])
    return {g: tuple(v) for g, v in seen.items()}


async def _a_player(client: httpx.AsyncClient) -> str:
    """A player of the sandbox day: the first one search finds for a team's name."""
    found = await client.get("/v1/search", params={"q": "chiefs", "kind": "player", "limit": 1})
    found.raise_for_status()
    return found.json()["data"][0]["id"]


def _listener_plan(slate: list[dict], keys: list[str], ws_url: str, base: str) -> dict:
    """The listeners: socket i on address i // PER_ADDRESS, account i // PER_ACCOUNT, and the
    topics of game i (in turn) of the slate."""
    games = [[f"game:{g['id']}", *(f"market:{m['id']}" for m in g["markets"])] for g in slate]
    rows = [{"address": f"127.2.{i // PER_ADDRESS // 250}.{i // PER_ADDRESS % 250 + 1}",
             "key": keys[i // PER_ACCOUNT], "topics": games[i % len(games)]} for i in range(SOCKETS)]
    return {"url": ws_url, "server": "api", "api": base, "mode": "test", "connections": rows}


class Listeners:
    """The 500 listening sockets, in a process of their own (tests/perf/wire_clients.py)."""

    def __init__(self, ctx: BenchContext, plan: dict) -> None:
        self.plan_path = ctx.workdir / "live-api-wire-plan.json"
        self.out = ctx.workdir / "live-api-wire-out.json"
        self.log = ctx.workdir / "live-api-wire-clients.log"
        self.plan_path.write_text(json.dumps(plan))
        self.proc: subprocess.Popen | None = None

    async def open(self) -> float:
        """Opens every socket; the seconds it took."""
        started = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.perf.wire_clients", "--plan", str(self.plan_path), "--out", str(self.out)],
            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(self.log, "wb"))
        line = await asyncio.wait_for(asyncio.to_thread(self.proc.stdout.readline), READY_SECONDS)
        if not line.startswith(b"ready"):
            raise RuntimeError(f"the Wire listeners did not open: {line!r}; see {self.log}")
        return time.monotonic() - started

    async def close(self) -> dict:
        """What they received: deltas, delay p50/p99 (ms), early closes."""
        self.proc.stdin.close()
        await asyncio.to_thread(self.proc.wait, 120)
        result = json.loads(self.out.read_text())
        delays = sorted(result["deltas"][1::2])
        pct = lambda q: delays[min(len(delays) - 1, int(q * len(delays)))] if delays else float("nan")  # noqa: E731
        return {"deltas": len(delays), "p50": pct(0.50), "p99": pct(0.99), "closed": result["closed"]}

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _serving(pid: int) -> psutil.Process:
    """The process that serves requests: the server's worker (granian's), or the server itself."""
    return ([p for p in psutil.Process(pid).children(recursive=True)] or [psutil.Process(pid)])[-1]


def _cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


def _profile(ctx: BenchContext, pid: int, seconds: float) -> subprocess.Popen | None:
    """With SVC_BENCH_PYSPY set, py-spy samples the API's serving process during the played mix
    (flat by function, the busiest first: <workdir>/live-api-profile.txt; and a flame graph)."""
    if not os.environ.get("SVC_BENCH_PYSPY"):
        return None
    worker = _serving(pid).pid
    return subprocess.Popen([str(Path(sys.executable).parent / "py-spy"), "record", "--pid", str(worker), "--duration", str(int(seconds)), "--nonblocking",
                             "--format", "raw", "-o", str(ctx.workdir / "live-api-profile.txt")],
                            stdout=subprocess.DEVNULL, stderr=open(ctx.workdir / "live-api-pyspy.log", "wb"))


def _gc_note(before: dict, after: dict) -> str:
    """Passes and their time during a load, by generation, and the longest pass since start."""
    parts = []
    for g in sorted(after):
        n0, s0, _ = before.get(g, (0.0, 0.0, 0.0))
        n1, s1, top = after[g]
        parts.append(f"gen {g} {n1 - n0:.0f} passes {(s1 - s0) * 1000:.0f} ms (longest so far {top * 1000:.1f} ms)")
    return ", ".join(parts) or "not reported"


def _mark(load: str) -> None:
    """With SVC_BENCH_LOOPWATCH set (tests/perf/loop_watch.py), the start of a load in its file."""
    if path := os.environ.get("SVC_BENCH_LOOPWATCH"):
        with open(path, "a") as out:
            out.write(json.dumps({"at": time.time(), "load": load}) + "\n")


def _route_of(name: str) -> str:
    """The route a path of the mix belongs to: the searches are one route."""
    return name.split("?", 1)[0]


async def run(ctx: BenchContext) -> list[Figure]:
    settings = await ctx.fresh_settings(key_secret=KEY_SECRET)
    await ensure_topics(settings)
    env = {**projector_env(settings), "SVC_KEY_SECRET": KEY_SECRET}
    projector = start_projector(settings, ctx.workdir / "live-api-projector.log", SVC_KEY_SECRET=KEY_SECRET)
    play = None
    listeners = None
    try:
        await asyncio.to_thread(_svc, env, "sample", "load", "--no-live")
        await asyncio.to_thread(_svc, env, "lag", "--wait", "180", timeout=240)
        key = await make_key(settings.database_url, "live-bench", mode="test", secret=KEY_SECRET)
        wire_keys = [await make_key(settings.database_url, f"live-bench-wire-{a}", {"read:odds", "wire:connect"},
                                    mode="test", secret=KEY_SECRET) for a in range(-(-SOCKETS // PER_ACCOUNT))]
        extra = {"KAFKA_BOOTSTRAP": settings.kafka_bootstrap, "SVC_TOPIC_NAMESPACE": settings.topic_namespace}
        with api_process(settings.database_url, settings.data_dir, KEY_SECRET, ctx.workdir / "live-api.log",
                         app="tests.perf.api_bench_app:app", **extra) as (base, api_proc):
            routes, slate = await _routes(base, key)
            listeners = Listeners(ctx, _listener_plan(slate, wire_keys, base.replace("http://", "ws://") + "/v1/wire",
                                                      base))
            open_seconds = await listeners.open()
            mix = [base + path for path in routes.values()]
            constant = [base + "/v1/bench/constant"]
            by_route: dict[str, list[str]] = {}
            for name, path in routes.items():
                by_route.setdefault(_route_of(name), []).append(base + path)
            await asyncio.to_thread(_load, mix + constant, WARMUP_SECONDS, key)  # first queries, caches
            serving = _serving(api_proc.pid)
            cpu_before = _cpu_seconds(serving)
            quiet_mix = await asyncio.to_thread(_load, mix, MIX_SECONDS, key)
            quiet_cpu = _cpu_seconds(serving) - cpu_before
            play = subprocess.Popen([*SVC, "sandbox", "play", "--speed", PLAY_SPEED], env=env, cwd=ROOT,
                                    stdout=subprocess.DEVNULL, stderr=open(ctx.workdir / "live-api-play.log", "wb"))
            await asyncio.sleep(3)  # under way: the pre-game is in the log already, the day's events follow
            notified: dict[str, int] = {}  # read-model changes announced to the API processes, per table
            listening = await asyncpg.connect(settings.database_url)
            await listening.add_listener(
                channels.read_models(pg_schema("test")),
                lambda *args: notified.__setitem__(args[3], notified.get(args[3], 0) + 1))
            noted_from = time.monotonic()
            _mark("constant before")
            constant_before = await asyncio.to_thread(_load, constant, ALONE_SECONDS, key)
            alone = {}
            for route, urls in by_route.items():
                _mark(route)
                alone[route] = await asyncio.to_thread(_load, urls, ALONE_SECONDS, key)
            constant_after = await asyncio.to_thread(_load, constant, ALONE_SECONDS, key)
            profile = _profile(ctx, api_proc.pid, MIX_SECONDS)
            _mark("played mix")
            gc_before = _gc_pauses(base, key)
            cpu_before = _cpu_seconds(serving)
            played_mix = await asyncio.to_thread(_load, mix, MIX_SECONDS, key)
            mix_cpu = _cpu_seconds(serving) - cpu_before
            gc_after = _gc_pauses(base, key)
            _mark("end")
            if profile is not None:
                profile.wait(60)
            still_playing = play.poll() is None
            noted_seconds = time.monotonic() - noted_from
            await listening.close()
            heard = await listeners.close()
    finally:
        if listeners is not None:
            listeners.kill()
        if play is not None and play.poll() is None:
            play.terminate()
            play.wait(30)
        projector.terminate()
        try:
            projector.wait(40)
        except subprocess.TimeoutExpired:
            projector.kill()
    if not still_playing:
        raise RuntimeError("the sandbox day ended before every load was measured: lower PLAY_SPEED")
    machine = f"{os.cpu_count()} cores, {psutil.virtual_memory().total / 2**30:.0f} GiB, shared"
    rate = lambda result: result["requests"] / result["seconds"]  # noqa: E731
    constant_rate = (rate(constant_before) + rate(constant_after)) / 2
    constant_p99 = max(constant_before["p99_ms"], constant_after["p99_ms"])
    base_name = "GET /v1/bench/constant alone, during play (mean of the loads before and after the routes)"
    figures = [
        Figure("read mix requests/s during play", rate(played_mix), "req/s", base_name, constant_rate, ">= 0.4",
               f"{CONNECTIONS} clients, {MIX_SECONDS}s, while the sandbox plays at {PLAY_SPEED}x; {machine}; "
               f"constant route {rate(constant_before):.0f} then {rate(constant_after):.0f} req/s"),
        Figure("read mix p99 during play", played_mix["p99_ms"], "ms", "GET /v1/bench/constant p99 alone, during play",
               constant_p99, "<= 20 ms",
               f"p50 {played_mix['p50_ms']:.1f} ms; quiet: mix p99 {quiet_mix['p99_ms']:.1f} ms; the serving process's "
               f"CPU during the mix {mix_cpu:.1f} s, {mix_cpu / max(1, played_mix['requests']) * 1e6:.0f} us a request "
               f"(Wire fan-out to the listeners included); quiet {quiet_cpu / max(1, quiet_mix['requests']) * 1e6:.0f} us "
               f"a request; collector passes during the mix by generation: {_gc_note(gc_before, gc_after)}"),
    ]
    for route, result in alone.items():
        figures.append(Figure(f"{route} requests/s alone during play", rate(result), "req/s", base_name, constant_rate,
                              ">= 0.4", f"p50 {result['p50_ms']:.1f} ms, p99 {result['p99_ms']:.1f} ms alone; "
                              f"{CONNECTIONS} clients, {ALONE_SECONDS}s"))
    paths = {path: name for name, path in routes.items()}
    failed = {name: result["errors"] for name, result in [("quiet mix", quiet_mix), ("constant before", constant_before),
                                                           ("constant after", constant_after), ("mix", played_mix),
                                                           *alone.items()] if result["errors"]}
    figures.append(Figure(f"Wire deltas received by the {SOCKETS} listening sockets during the loads", heard["deltas"],
                          "deltas", None, None, "-",
                          f"receive - emit_ts p50 {heard['p50']:.0f} ms, p99 {heard['p99']:.0f} ms; opening took "
                          f"{open_seconds:.0f}s; closed early: {len(heard['closed'])} {sorted(set(heard['closed']))[:3]}"))
    per_second = ", ".join(f"{t} {n / noted_seconds:.1f}" for t, n in sorted(notified.items(), key=lambda x: -x[1]))
    figures[0].note += f"; read-model changes announced per second during play, by table: {per_second}"
    if failed:  # reported, not hidden: on an overloaded machine a request may wait past the pool's timeout (503)
        figures[0].note += f"; error responses (counted in the rates): {failed}"
    for path, stats in played_mix["paths"].items():
        quiet = quiet_mix["paths"][path]
        figures.append(Figure(f"{paths[path]} p99 in the mix during play", stats["p99_ms"], "ms",
                              "GET /v1/bench/constant p99 alone, during play", constant_p99, "<= 20 ms",
                              f"p50 {stats['p50_ms']:.1f} ms, {stats['requests']} requests; quiet p99 "
                              f"{quiet['p99_ms']:.1f} ms"))
    return figures
