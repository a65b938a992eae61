"""Read API throughput and tail latency, each as a ratio over a trivial route of the same server.

The served app (SVC_API_SERVER, h2corn unless set; one worker, `api.server:app` with the Scale plan's rate window lifted,
see api_bench_app.py) over the sample read models; 64 concurrent keep-alive clients from a
separate load-generator process (`wrk` when installed, else tests/perf/http_load.py). Baseline:
GET /health on the same server in the same run (it checks the database: one pooled query).
Targets (issue 6): requests/s >= 0.4 of the baseline, p99 <= 10 ms.

Compression (api/front.py): the same two routes asked for with `Accept-Encoding: gzip`, each over
itself without it: bytes on the wire, requests/s and p99.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys

import asyncpg
import httpx

from api.front import COMPRESS_LEVEL
from schemas.natural_keys import market_id
from tests.perf.run import BenchContext, Figure
from tests.support.api_fixtures import make_key
from tests.support.projection_harness import project
from tests.support.sample_fold import sample_events
from tests.support.sample_fold import sample as sample_files
from tests.support.live_server import api_server, served_by

CONNECTIONS = 64
SECONDS = 10
WARMUP_SECONDS = 2
KEY_SECRET = "bench-secret"


def _wrk(url: str, seconds: float, headers: list[str]) -> dict:
    out = subprocess.run(
        ["wrk", "-t1", f"-c{CONNECTIONS}", f"-d{seconds}s", "--latency", *(a for h in headers for a in ("-H", h)), url],
        capture_output=True, text=True, check=True,
    ).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))

    def ms(label: str) -> float:
        value, unit = re.search(rf"\s{label}\s+([\d.]+)(us|ms|s)\b", out).groups()
        return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]

    non_2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    return {"rate": rate, "p50_ms": ms("50%"), "p99_ms": ms("99%"), "errors": int(non_2xx.group(1)) if non_2xx else 0}


def _python_load(url: str, seconds: float, headers: list[str]) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "tests.perf.http_load", url, "--connections", str(CONNECTIONS), "--seconds", str(seconds),
         *(a for h in headers for a in ("--header", h))],
        capture_output=True, text=True, check=True,
    ).stdout
    result = json.loads(out)
    return {"rate": result["requests"] / result["seconds"], "p50_ms": result["p50_ms"], "p99_ms": result["p99_ms"],
            "errors": result["errors"]}


def _measure(url: str, headers: list[str]) -> dict:
    load = _wrk if shutil.which("wrk") else _python_load
    load(url, WARMUP_SECONDS, headers)
    result = load(url, SECONDS, headers)
    if result["errors"]:
        raise RuntimeError(f"{result['errors']} error responses from {url}")
    return result


async def run(ctx: BenchContext) -> list[Figure]:
    settings = await ctx.fresh_settings(key_secret=KEY_SECRET)
    conn = await asyncpg.connect(settings.database_url)
    try:
        await project(settings, conn, sample_events(), "live")
        sample = sample_files()
        key = await make_key(settings.database_url, "bench", secret=KEY_SECRET)
    finally:
        await conn.close()
    header = f"Authorization: Bearer {key}"
    gzip = "Accept-Encoding: gzip"
    spreads = market_id(sample.opener.game_id, "game", "spreads", "full", None)
    routes = {
        "health": "/health",
        "games": "/v1/games?competition=nfl&season=2024&limit=20",
        "market": f"/v1/markets/{spreads}",
    }
    tool = "wrk -t1" if shutil.which("wrk") else "tests/perf/http_load.py"
    log = ctx.workdir / "api-bench.log"
    with api_server(settings.database_url, settings.data_dir, KEY_SECRET, log, app="tests.perf.api_bench_app:app") as base:
        results = {}
        for name, path in routes.items():
            results[name] = await asyncio.to_thread(_measure, base + path, [header])
        sizes = {}
        async with httpx.AsyncClient(base_url=base, timeout=30, headers={"Authorization": f"Bearer {key}"}) as client:
            for name in ("games", "market"):
                results[f"{name}+gzip"] = await asyncio.to_thread(_measure, base + routes[name], [header, gzip])
                plain = await client.get(routes[name], headers={"Accept-Encoding": "identity"})
                packed = await client.get(routes[name], headers={"Accept-Encoding": "gzip"})
                if packed.headers.get("content-encoding") != "gzip":
                    raise RuntimeError(f"{routes[name]} was not compressed")
                sizes[name] = (int(plain.headers["content-length"]), int(packed.headers["content-length"]))
    base_line = results["health"]
    note = f"{CONNECTIONS} clients, {SECONDS}s, {tool}, {served_by()} 1 worker"
    figures = []
    for name, label in (("games", "GET /v1/games (page of 20)"), ("market", "GET /v1/markets/{id} (main + alternate)")):
        r = results[name]
        figures.append(Figure(f"{label} requests/s", r["rate"], "req/s", "GET /health, same server", base_line["rate"],
                              ">= 0.4", note))
        figures.append(Figure(f"{label} p99", r["p99_ms"], "ms", "GET /health p99", base_line["p99_ms"], "<= 10 ms",
                              f"p50 {r['p50_ms']:.2f} ms"))
    for name, label in (("games", "GET /v1/games (page of 20)"), ("market", "GET /v1/markets/{id} (main + alternate)")):
        plain, packed = results[name], results[f"{name}+gzip"]
        figures.append(Figure(f"{label} gzip: bytes on the wire", sizes[name][1], "bytes", "same route uncompressed",
                              sizes[name][0], None, f"Accept-Encoding: gzip, level {COMPRESS_LEVEL}"))
        figures.append(Figure(f"{label} gzip: requests/s", packed["rate"], "req/s", "same route uncompressed",
                              plain["rate"], None, note))
        figures.append(Figure(f"{label} gzip: p99", packed["p99_ms"], "ms", "same route uncompressed p99",
                              plain["p99_ms"], "<= 10 ms", f"p50 {packed['p50_ms']:.2f} ms"))
    return figures
