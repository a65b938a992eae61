"""Access under load: two API processes share rate windows through Redis. Each is `api.server:app`
served as `svc up` serves it and as the other benches do (tests/support/live_server.py: the server
SVC_API_SERVER names, h2corn unless set; one worker), so the figures are for the server users run.

Concurrent bursts split across both processes must admit exactly the plan's limit per window,
never more, and every refusal must carry correct headers. Phases:
  1. a Free key (120 calls / 60 s): a burst of 600 calls;
  2. the same key once the first burst has left the window: again exactly 120;
  3. key-less calls (anonymous: 60 / 600 s per address per operation): a burst of 300;
  4. cost of access control: GET /v1/status with a Scale key (key check, Redis window, credit
     read) against OPTIONS /v1/status (same app, no access control) on the same processes.
Redis: `REDIS_URL`, else a `redis-server` started here on a free port.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time
from contextlib import ExitStack
from pathlib import Path

import asyncpg
import httpx

from access.store import create_key
from infra.net import free_port, wait_port
from tests.perf.run import BenchContext, Figure
from tests.support.live_server import api_server, served_by

CONCURRENCY = 64


def _start_redis(workdir: Path) -> tuple[str, subprocess.Popen | None]:
    if os.environ.get("REDIS_URL"):
        return os.environ["REDIS_URL"], None
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("bench_access needs Redis: set REDIS_URL or put redis-server on PATH")
    port = free_port()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(workdir)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    wait_port("127.0.0.1", port, 10, is_alive=lambda: proc.poll() is None)
    return f"redis://127.0.0.1:{port}/0", proc


async def _burst(
    clients: list[httpx.AsyncClient], path: str, n: int, key: str | None, method: str = "GET"
) -> list[httpx.Response]:
    """`n` concurrent calls, alternating between the API processes."""
    gate = asyncio.Semaphore(CONCURRENCY)
    headers = {"Authorization": f"Bearer {key}"} if key else {}

    async def one(i: int) -> httpx.Response:
        async with gate:
            r = await clients[i % len(clients)].request(method, path, headers=headers)
        r.extensions["received_at"] = time.time()
        return r

    return await asyncio.gather(*(one(i) for i in range(n)))


def _refusal_ok(r: httpx.Response, limit: int, window: int, plan: str, resource: str) -> bool:
    h = r.headers
    try:
        body = r.json()
        t = int(h["ratelimit"].split(", ")[0].rsplit("t=", 1)[1])
        return (
            body["code"] == "rate_limited" and body["retryable"] is True and body["request_id"] == h["request-id"]
            and h["x-ratelimit-limit"] == str(limit) and h["x-ratelimit-remaining"] == "0"
            and h["x-ratelimit-resource"] == resource
            and h["ratelimit-policy"].split(", ")[0] == f'"{plan}";q={limit};w={window}'
            and h["ratelimit"].startswith(f'"{plan}";r=0;t=')
            and 1 <= int(h["retry-after"]) <= window and int(h["retry-after"]) == max(1, t)
            and abs(int(h["x-ratelimit-reset"]) - (r.extensions["received_at"] + t)) <= 2
        )
    except (KeyError, ValueError, IndexError):
        return False


def _window_figures(label: str, responses: list[httpx.Response], limit: int, window: int, plan: str, resource: str) -> list[Figure]:
    allowed = [r for r in responses if r.status_code == 200]
    refused = [r for r in responses if r.status_code == 429]
    other = len(responses) - len(allowed) - len(refused)
    distinct = len({r.headers["x-ratelimit-remaining"] for r in allowed})
    good = sum(_refusal_ok(r, limit, window, plan, resource) for r in refused)
    sent = f"{len(responses)} calls, {CONCURRENCY} concurrent, over 2 processes"
    return [
        Figure(f"{label}: admitted / limit", len(allowed), "calls", "plan limit", limit, "== 1.0",
               f"{sent}; {len(refused)} refused, {other} other"),
        Figure(f"{label}: distinct X-RateLimit-Remaining among admitted / limit", distinct, "values", "plan limit",
               limit, "== 1.0", "each admission saw every earlier one, whichever process served it"),
        Figure(f"{label}: refusals with correct headers / refusals", good, "responses", "refusals",
               len(refused) or None, "== 1.0", "429 rate_limited, retryable, Retry-After = t, RateLimit r=0, X-RateLimit-*"),
    ]


async def _rate(clients, path: str, n: int, key: str | None, method: str, expect: int) -> float:
    started = time.perf_counter()
    responses = await _burst(clients, path, n, key, method)
    elapsed = time.perf_counter() - started
    assert all(r.status_code == expect for r in responses), {r.status_code for r in responses}
    return n / elapsed


async def run(ctx: BenchContext) -> list[Figure]:
    redis_url, redis_proc = _start_redis(ctx.workdir)
    try:
        settings = await ctx.fresh_settings(redis_url=redis_url)
        conn = await asyncpg.connect(settings.database_url)
        try:
            secret = settings.secret().encode()
            free, _ = await create_key(conn, secret, account="bench-free", plan="free", scopes={"read:odds"}, mode="live")
            scale, _ = await create_key(conn, secret, account="bench-scale", plan="scale", scopes={"read:odds"}, mode="live")
        finally:
            await conn.close()
        with ExitStack() as servers:  # each started and healthy, stopped on the way out
            bases = [servers.enter_context(api_server(
                settings.database_url, settings.data_dir, settings.key_secret, ctx.workdir / f"api-{i}.log",
                REDIS_URL=redis_url, SVC_TOPIC_NAMESPACE=settings.topic_namespace)) for i in range(2)]
            return await _measure(bases, free, scale)
    finally:
        if redis_proc is not None:
            redis_proc.terminate()
            redis_proc.wait(10)


async def _measure(bases: list[str], free: str, scale: str) -> list[Figure]:
    limits = httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
    clients = [httpx.AsyncClient(base_url=base, limits=limits, timeout=30) for base in bases]
    try:
        for c in clients:  # warm both processes (lifespan done, pools open)
            assert (await c.get("/health")).status_code == 200

        figures: list[Figure] = []
        first = await _burst(clients, "/v1/status", 600, free)
        figures += _window_figures("free, burst 1", first, 120, 60, "free", "all")
        # a sliding window admits again only as admitted calls leave it: wait for all of burst 1
        await asyncio.sleep(61)
        second = await _burst(clients, "/v1/status", 600, free)
        figures += _window_figures("free, burst 2 (61 s later)", second, 120, 60, "free", "all")
        anonymous = await _burst(clients, "/v1/status", 300, None)
        figures += _window_figures("anonymous, burst", anonymous, 60, 600, "anonymous", "status")

        # baseline: the same path through the same front door and app, but Litestar's OPTIONS
        # handler, which has no operation and so skips access control
        bare_rate = await _rate(clients, "/v1/status", 2000, scale, "OPTIONS", 204)
        status_rate = await _rate(clients, "/v1/status", 2000, scale, "GET", 200)
        figures.append(Figure(
            "GET /v1/status with a Scale key (key check + Redis window + credit read)", status_rate, "req/s",
            "OPTIONS /v1/status, same 2 processes (no access control)", bare_rate, None,
            f"2000 calls each, {CONCURRENCY} concurrent; {served_by()}, 1 worker each; client on the same 2 cores",
        ))
        return figures
    finally:
        for c in clients:
            await c.aclose()
