"""The read API while the sandbox plays (issue 26, target 3), each figure against a trivial route of
the same server measured in the same conditions of the same run.

The served app (granian, one worker, tests/perf/api_bench_app.py) over the sandbox day (`svc
sample load --no-live`, projected by `svc projector run` in its own process, as `svc up` runs it),
read with a test-mode key. Routes: `/v1/games`, `/v1/slate`, `/v1/games/{id}`, `/v1/markets/{id}`,
`/v1/players/{id}` and `/v1/search` (queries as people type them, misspelled included, taken in
turn as one route). Loads are 64 keep-alive clients (tests/perf/http_load.py, a process of its
own). Baseline: `GET /v1/bench/constant` on the same server, through the same middleware, key
check and metering (api_bench_app.py).

Quiet (before play): the mix once, each connection taking the routes in turn. Then while `svc
sandbox play` replays the day (the projector writing the read models, deltas going out): the
constant route alone, each route alone, the constant route alone again, and the mix. A route's
throughput is its requests/s alone over the mean of the two constant loads around it; its p99 is
taken in the mix (every route waiting behind every other) and alone. The play is checked to have
lasted through every load.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time

import httpx
import psutil

from infra.topics import ensure_topics
from tests.perf.run import ROOT, BenchContext, Figure
from tests.support.api_fixtures import make_key
from tests.support.live_server import api_process
from tests.support.projection_harness import projector_env, start_projector

KEY_SECRET = "bench-secret"
CONNECTIONS = 64
MIX_SECONDS = 8
ALONE_SECONDS = 5
WARMUP_SECONDS = 3
PLAY_SPEED = "600"  # the sandbox day (10.5 hours) in about a minute: long enough for both loads
SEARCHES = ("chiefs", "kansas cty", "eagels", "ravens", "buffalo bils")  # as people type them
SVC = [sys.executable, "-m", "cli.main"]


def _load(urls: list[str], seconds: float, key: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "tests.perf.http_load", *urls, "--connections", str(CONNECTIONS), "--seconds",
         str(seconds), "--header", f"Authorization: Bearer {key}"],
        capture_output=True, text=True, check=True, cwd=ROOT,
    ).stdout
    return json.loads(out)


def _svc(env: dict, *args: str, timeout: float = 300) -> str:
    done = subprocess.run([*SVC, *args], env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    if done.returncode != 0:
        raise RuntimeError(f"svc {' '.join(args)}: {done.stdout[-500:]} {done.stderr[-1500:]}")
    return done.stdout


async def _routes(base: str, key: str) -> dict[str, str]:
    """The mix: a path per route, each checked to answer 200 first."""
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
    return routes


async def _a_player(client: httpx.AsyncClient) -> str:
    """A player of the sandbox day: the first one search finds for a team's name."""
    found = await client.get("/v1/search", params={"q": "chiefs", "kind": "player", "limit": 1})
    found.raise_for_status()
    return found.json()["data"][0]["id"]


def _route_of(name: str) -> str:
    """The route a path of the mix belongs to: the searches are one route."""
    return name.split("?", 1)[0]


async def run(ctx: BenchContext) -> list[Figure]:
    settings = await ctx.fresh_settings(key_secret=KEY_SECRET)
    await ensure_topics(settings)
    env = {**projector_env(settings), "SVC_KEY_SECRET": KEY_SECRET}
    projector = start_projector(settings, ctx.workdir / "live-api-projector.log", SVC_KEY_SECRET=KEY_SECRET)
    play = None
    try:
        await asyncio.to_thread(_svc, env, "sample", "load", "--no-live")
        await asyncio.to_thread(_svc, env, "lag", "--wait", "180", timeout=240)
        key = await make_key(settings.database_url, "live-bench", mode="test", secret=KEY_SECRET)
        extra = {"KAFKA_BOOTSTRAP": settings.kafka_bootstrap, "SVC_TOPIC_NAMESPACE": settings.topic_namespace}
        with api_process(settings.database_url, settings.data_dir, KEY_SECRET, ctx.workdir / "live-api.log",
                         app="tests.perf.api_bench_app:app", **extra) as (base, _):
            routes = await _routes(base, key)
            mix = [base + path for path in routes.values()]
            constant = [base + "/v1/bench/constant"]
            by_route: dict[str, list[str]] = {}
            for name, path in routes.items():
                by_route.setdefault(_route_of(name), []).append(base + path)
            await asyncio.to_thread(_load, mix + constant, WARMUP_SECONDS, key)  # first queries, caches
            quiet_mix = await asyncio.to_thread(_load, mix, MIX_SECONDS, key)
            play = subprocess.Popen([*SVC, "sandbox", "play", "--speed", PLAY_SPEED], env=env, cwd=ROOT,
                                    stdout=subprocess.DEVNULL, stderr=open(ctx.workdir / "live-api-play.log", "wb"))
            await asyncio.sleep(3)  # under way: the pre-game is in the log already, the day's events follow
            constant_before = await asyncio.to_thread(_load, constant, ALONE_SECONDS, key)
            alone = {}
            for route, urls in by_route.items():
                alone[route] = await asyncio.to_thread(_load, urls, ALONE_SECONDS, key)
            constant_after = await asyncio.to_thread(_load, constant, ALONE_SECONDS, key)
            played_mix = await asyncio.to_thread(_load, mix, MIX_SECONDS, key)
            still_playing = play.poll() is None
    finally:
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
               f"p50 {played_mix['p50_ms']:.1f} ms; quiet: mix p99 {quiet_mix['p99_ms']:.1f} ms"),
    ]
    for route, result in alone.items():
        figures.append(Figure(f"{route} requests/s alone during play", rate(result), "req/s", base_name, constant_rate,
                              ">= 0.4", f"p50 {result['p50_ms']:.1f} ms, p99 {result['p99_ms']:.1f} ms alone; "
                              f"{CONNECTIONS} clients, {ALONE_SECONDS}s"))
    paths = {path: name for name, path in routes.items()}
    failed = {name: result["errors"] for name, result in [("quiet mix", quiet_mix), ("constant before", constant_before),
                                                           ("constant after", constant_after), ("mix", played_mix),
                                                           *alone.items()] if result["errors"]}
    if failed:  # reported, not hidden: on an overloaded machine a request may wait past the pool's timeout (503)
        figures[0].note += f"; error responses (counted in the rates): {failed}"
    for path, stats in played_mix["paths"].items():
        quiet = quiet_mix["paths"][path]
        figures.append(Figure(f"{paths[path]} p99 in the mix during play", stats["p99_ms"], "ms",
                              "GET /v1/bench/constant p99 alone, during play", constant_p99, "<= 20 ms",
                              f"p50 {stats['p50_ms']:.1f} ms, {stats['requests']} requests; quiet p99 "
                              f"{quiet['p99_ms']:.1f} ms"))
    return figures
