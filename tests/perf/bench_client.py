"""The Python client: its overhead over raw httpx for a page of games; its Wire throughput; its
resume after an API restart.

REST:
Same served app (SVC_API_SERVER, h2corn unless set; one worker, tests/perf/api_bench_app.py) over the sample read models,
same keep-alive connection pool, sequential calls of GET /v1/games?...&limit=50 from one
process: `Client.games.list` (headers, typed msgspec decode into Game structs, a Page) against
`httpx.Client.get(...).json()` (plain dicts). Both walls include the server's time, so the ratio
is what a caller pays end to end; the decode figures isolate the client-side work on the same
bytes. Target: end to end <= 1.10 of raw httpx.

Wire throughput: one process applies a burst of market deltas (`client.wire.subscribe`: decode,
seq and gap checks, fold into the topic's state, a typed event each) against a raw `websockets`
reader of the same burst that only `json.loads` each frame. The burst is a resume's replay (the
server writes what a session missed at once, from the last two minutes it keeps): deltas written
to `wire.deltas` while both are disconnected, each changing one line of one of ten markets of the
sample read models; both readers resume the same session point and get the same frames. The
client-side figures time the same work on the same frames without the socket.

Resume after a restart: 500 clients each hold a socket (one topic each) to one API process; it is
stopped (SIGTERM: sockets close 4201, "resume now") and a new one started on the same port; the
figure is the time until every client has resumed its session on the new process, against opening
500 fresh connections (ticket, socket, subscribe, snapshot) at once on the running process. Limits
stay as they are: at most 5 open sockets per address (the clients spread over 127.0.0.x source
addresses, 4 each) and 100 per scale-plan account (10 accounts of 50).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from datetime import datetime, timezone

import asyncpg
import httpx
import msgspec

import client
from websockets.asyncio.client import connect as ws_connect

from api.queries import wire as wire_sql
from client.models import Game, ListEnvelope
from client.wire import Subscription
from infra.db import connect as db_connect
from infra.kafka import make_producer
from infra.net import free_port
from infra.topics import ensure_topics
from schemas.datasets import WIRE_DELTAS, pg_schema, topic_name
from tests.perf.run import BenchContext, Figure
from tests.support.api_fixtures import make_key
from tests.support.projection_harness import project
from tests.support.sample_fold import sample_events
from tests.support.live_server import api_process, api_server, served_by
from wire.snapshots import market_snapshot

KEY_SECRET = "bench-secret"
CALLS = 400
PARAMS = {"competition": "nfl", "season": "2024", "limit": 50}


def _measure(base: str, key: str) -> dict[str, float]:
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=base) as raw, client.Client(base_url=base, api_key=key) as svc:
        for _ in range(20):  # warm both pools and the server's caches
            raw.get("/v1/games", params=PARAMS, headers=headers).json()
            svc.games.list(**PARAMS)
        out = {"raw": 0.0, "client": 0.0}
        for _ in range(3):  # interleaved rounds, so drift hits both alike
            t = time.perf_counter()
            for _ in range(CALLS):
                raw.get("/v1/games", params=PARAMS, headers=headers).json()
            out["raw"] += time.perf_counter() - t
            t = time.perf_counter()
            for _ in range(CALLS):
                page = svc.games.list(**PARAMS)
            out["client"] += time.perf_counter() - t
        assert len(page.data) == 50
        body = raw.get("/v1/games", params=PARAMS, headers=headers).content
    decoder = msgspec.json.Decoder(ListEnvelope[Game])
    n = 2000
    t = time.perf_counter()
    for _ in range(n):
        json.loads(body)
    out["decode_json"] = (time.perf_counter() - t) / n
    t = time.perf_counter()
    for _ in range(n):
        decoder.decode(body)
    out["decode_typed"] = (time.perf_counter() - t) / n
    out["calls"] = 3 * CALLS
    return out


WIRE_MARKETS, WIRE_BURST, WIRE_ROUNDS = 10, 2_000, 3  # 20,000 deltas a burst (the server keeps 5,000 a topic)
REPLAY_TIMEOUT = 120.0
CLIENTS, PER_ACCOUNT, PER_ADDRESS = 500, 50, 4  # the limits: 100 sockets per scale account, 5 per address


async def _wire_setup(ctx: BenchContext, accounts: int, markets: int):
    """Fresh settings with the sample read models, `accounts` scale keys, and the `markets`
    markets with most lines: (id, snapshot data, last seq)."""
    settings = await ctx.fresh_settings(key_secret=KEY_SECRET)
    await ensure_topics(settings, ("live",))
    schema = pg_schema("live")
    conn = await asyncpg.connect(settings.database_url)
    try:
        await project(settings, conn, sample_events(), "live")
        keys = [await make_key(settings.database_url, f"bench{i}", {"read:odds", "wire:connect"}, secret=KEY_SECRET)
                for i in range(accounts)]
    finally:
        await conn.close()
    conn = await db_connect(settings.database_url)  # JSON columns decoded, as the API reads them
    try:
        ids = [r["market_id"] for r in await conn.fetch(
            f"SELECT market_id FROM {schema}.market_lines GROUP BY market_id ORDER BY count(*) DESC, market_id "
            "LIMIT $1", markets)]
        found = []
        for mid in ids:
            row, lines = await wire_sql.market_rows(conn, schema, mid)
            found.append((mid, msgspec.json.decode(msgspec.json.encode(market_snapshot(row, lines))), row["last_seq"]))
    finally:
        await conn.close()
    env = {"KAFKA_BOOTSTRAP": settings.kafka_bootstrap, "SVC_TOPIC_NAMESPACE": settings.topic_namespace}
    return settings, keys, found, env


async def _burst(settings, markets, seqs: dict[str, int], per_topic: int) -> None:
    """`per_topic` deltas for each market, as the projector writes them: the header in full and
    the one line that changed (a price moved)."""
    producer = make_producer(settings)
    await producer.start()
    try:
        name = topic_name("live", WIRE_DELTAS, settings.topic_namespace)
        now = datetime.now(timezone.utc)
        for i in range(per_topic):
            for mid, snap, _ in markets:
                topic = f"market:{mid}"
                seqs[topic] += 1
                line = snap["lines"][i % len(snap["lines"])]
                outcomes = [{**o, "price": o["price"] + (i % 5) * 0.01} if isinstance(o["price"], (int, float)) else o
                            for o in line["outcomes"]]
                data = {**{k: v for k, v in snap.items() if k != "lines"}, "lines": [{**line, "outcomes": outcomes}],
                        "removed_lines": []}
                envelope = {"op": "delta", "type": "market.update", "topic": topic, "seq": seqs[topic],
                            "source_ts": now, "emit_ts": now, "source": "bench", "data": data}
                await producer.send(name, msgspec.json.encode(envelope), key=topic.encode())
        await producer.flush()
    finally:
        await producer.stop()


async def _raw_open(base: str, key: str, topics: list[str]) -> dict:
    """A session of the raw reader: its ID, resume token and each topic's seq."""
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        r = await http.post("/v1/wire/tickets", json={"transport": "ws", "topics": topics},
                            headers={"Authorization": f"Bearer {key}"})
        r.raise_for_status()
        ticket = r.json()
    async with ws_connect(ticket["url"], subprotocols=["svc.v1"]) as ws:
        await ws.send(json.dumps({"op": "auth", "ticket": ticket["ticket"]}))
        hello = json.loads(await ws.recv())
        await ws.send(json.dumps({"op": "subscribe", "topics": topics, "request_id": "s"}))
        seqs = {}
        while (msg := json.loads(await ws.recv()))["op"] != "ack":
            if msg["op"] == "snapshot":
                seqs[msg["topic"]] = msg["seq"]
    return {"session_id": hello["session_id"], "token": hello["resume_token"], "seqs": seqs}


async def _raw_replay(base: str, raw: dict, expect: int, keep: list | None = None) -> float:
    """Resume the raw session from its seqs and read `expect` deltas, `json.loads` each and
    nothing more; seconds from the first delta to the last. `keep` gets the delta frames."""
    url = base.replace("http://", "ws://") + "/v1/wire"
    async with ws_connect(url, subprotocols=["svc.v1"], max_size=None) as ws:
        await ws.send(json.dumps({"op": "resume", "session_id": raw["session_id"], "resume_token": raw["token"],
                                  "last_seq": raw["seqs"]}))
        return await asyncio.wait_for(_raw_read(ws, raw, expect, keep), REPLAY_TIMEOUT)


async def _raw_read(ws, raw: dict, expect: int, keep: list | None) -> float:
    got, first = 0, None
    while got < expect:
        frame = await ws.recv()
        msg = json.loads(frame)
        op = msg.get("op")
        if op == "delta":
            first = first or time.perf_counter()
            got += 1
            if keep is not None:
                keep.append(frame)
        elif op == "hello":
            raw["token"] = msg["resume_token"]
        elif op == "ping":
            await ws.send(json.dumps({"op": "pong", "ts": msg["ts"]}))
        elif op in ("resume_failed", "error"):
            raise RuntimeError(f"raw resume: {msg}")
    return time.perf_counter() - first


async def _client_replay(stream, expect: int) -> float:
    """Pull `expect` deltas from the client's stream; seconds from the first to the last."""
    async def pull() -> float:
        got, first = 0, None
        while got < expect:
            event = await stream.__anext__()
            if event.op == "delta":
                first = first or time.perf_counter()
                got += 1
        return time.perf_counter() - first
    return await asyncio.wait_for(pull(), REPLAY_TIMEOUT)  # one timeout for the lot: no task per event


async def _wire_throughput(ctx: BenchContext) -> dict[str, float]:
    settings, keys, markets, env = await _wire_setup(ctx, 1, WIRE_MARKETS)
    topics = [f"market:{mid}" for mid, _, _ in markets]
    seqs = {f"market:{mid}": seq for mid, _, seq in markets}
    expect = WIRE_BURST * len(markets)
    out = {"client": 0.0, "raw": 0.0, "deltas": 0}
    frames: list = []
    with api_server(settings.database_url, settings.data_dir, KEY_SECRET, ctx.workdir / "client-wire.log",
                    **env) as base:
        raw = await _raw_open(base, keys[0], topics)
        svc = client.AsyncClient(base_url=base, api_key=keys[0])
        sub = svc.wire.subscribe(topics)
        stream = sub.__aiter__()
        try:
            while sub.snapshots < len(topics):
                await asyncio.wait_for(stream.__anext__(), 60)
            for r in range(WIRE_ROUNDS):
                sub._ws.transport.abort()  # dropped: it resumes (and gets the burst replayed) once pulled
                before = (json.loads(json.dumps(sub.states)), dict(sub.seqs))
                await _burst(settings, markets, seqs, WIRE_BURST)
                keep = [] if r == 0 else None
                await _raw_replay(base, raw, expect, keep)  # the fan-out has it all (unmeasured)
                if keep is not None:
                    frames, states_before = keep, before
                order = ("client", "raw") if r % 2 == 0 else ("raw", "client")
                for who in order:
                    if who == "client":
                        out["client"] += await _client_replay(stream, expect)
                    else:
                        out["raw"] += await _raw_replay(base, raw, expect)
                assert sub.seqs == seqs, "the client did not end at the burst's last seqs"
                raw["seqs"] = dict(seqs)
                out["deltas"] += expect
        finally:
            await sub.aclose()
            await svc.aclose()
    # the same work on the same frames without the socket
    n = len(frames)
    t = time.perf_counter()
    for frame in frames:
        json.loads(frame)
    out["loads"] = (time.perf_counter() - t) / n
    off = Subscription(None, topics, None)
    off.states, off.seqs = states_before
    t = time.perf_counter()
    for frame in frames:
        await off._apply(None, msgspec.json.decode(frame))
    out["apply"] = (time.perf_counter() - t) / n
    assert off.seqs == {topic: seq - (WIRE_ROUNDS - 1) * WIRE_BURST for topic, seq in seqs.items()}
    return out


async def _restart(ctx: BenchContext) -> dict[str, float]:
    settings, keys, markets, env = await _wire_setup(ctx, -(-CLIENTS // PER_ACCOUNT), 50)
    topics = [f"market:{mid}" for mid, _, _ in markets]
    port = free_port()
    run = (settings.database_url, settings.data_dir, KEY_SECRET)
    first = api_process(*run, ctx.workdir / "client-restart-1.log", port=port, **env)
    base, _ = await asyncio.to_thread(first.__enter__)
    second = None
    svcs = [client.AsyncClient(base_url=base, api_key=key) for key in keys]
    subs = [svcs[i // PER_ACCOUNT].wire.subscribe(
        [topics[i % len(topics)]], connect_options={"local_addr": (f"127.0.0.{2 + i // PER_ADDRESS}", 0)})
        for i in range(CLIENTS)]

    async def consume(sub) -> None:
        async for _ in sub:
            pass

    async def until(predicate, timeout: float, what: str) -> float:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise TimeoutError(what)
            await asyncio.sleep(0.01)
        return time.perf_counter()

    out: dict[str, float] = {}
    tasks = []
    try:
        t = time.perf_counter()
        tasks = [asyncio.create_task(consume(sub)) for sub in subs]
        out["fresh"] = await until(lambda: all(s.snapshots == 1 for s in subs), 120, "fresh connections") - t
        held = [(s.session_id, s.resume_token) for s in subs]
        t_term = time.perf_counter()
        await asyncio.to_thread(first.__exit__, None, None, None)  # SIGTERM: 4201, resume now
        t_exit = time.perf_counter()
        second = api_process(*run, ctx.workdir / "client-restart-2.log", port=port, **env)
        await asyncio.to_thread(second.__enter__)
        t_up = time.perf_counter()
        try:
            t_all = await until(lambda: all(s.resume_token != token for s, (_, token) in zip(subs, held)), 120,
                                "resumes after the restart")
        except TimeoutError:
            done = [t.exception() for t in tasks if t.done()]
            resumed = sum(s.resume_token != token for s, (_, token) in zip(subs, held))
            closes = sorted({c for s in subs for c in s.closes})
            raise TimeoutError(f"{resumed}/{CLIENTS} resumed; close codes {closes}; "
                               f"{sum(s.resumes for s in subs)} resume attempts; consumers ended: {done[:3]}") from None
        out.update(stop=t_exit - t_term, start=t_up - t_exit, after_up=t_all - t_up, after_term=t_all - t_term)
        out["same_sessions"] = sum(s.session_id == sid for s, (sid, _) in zip(subs, held))
        out["snapshots"] = sum(s.snapshots for s in subs)
    finally:
        for sub in subs:
            await sub.aclose()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for svc in svcs:
            await svc.aclose()
        if second is not None:
            await asyncio.to_thread(second.__exit__, None, None, None)
    return out


async def run(ctx: BenchContext) -> list[Figure]:
    settings = await ctx.fresh_settings(key_secret=KEY_SECRET)
    conn = await asyncpg.connect(settings.database_url)
    try:
        await project(settings, conn, sample_events(), "live")
        key = await make_key(settings.database_url, "bench", secret=KEY_SECRET)
    finally:
        await conn.close()
    log = ctx.workdir / "client-bench.log"
    with api_server(settings.database_url, settings.data_dir, KEY_SECRET, log, app="tests.perf.api_bench_app:app") as base:
        r = await asyncio.to_thread(_measure, base, key)
    per_call = {k: r[k] / r["calls"] * 1000 for k in ("raw", "client")}
    note = f"{int(r['calls'])} sequential calls each, one keep-alive connection, {served_by()} 1 worker"
    w = await _wire_throughput(ctx)
    rs = await _restart(ctx)
    load = "machine load average (1/5/15 min) %.1f/%.1f/%.1f on %d cores" % (*os.getloadavg(), os.cpu_count())
    burst = f"{WIRE_ROUNDS} resume replays of {WIRE_BURST * WIRE_MARKETS:,} deltas ({WIRE_MARKETS} markets), one process, first delta to last; {load}"
    restart = (f"SIGTERM -> old process gone {rs['stop']:.1f} s, new one healthy {rs['start']:.1f} s later, "
               f"all resumed {rs['after_up']:.2f} s after that; {int(rs['same_sessions'])}/{CLIENTS} kept their "
               f"session, {int(rs['snapshots']) - CLIENTS} snapshots re-sent; 10 accounts, 125 source addresses")
    return [
        Figure("client.games.list (page of 50) per call", per_call["client"], "ms",
               "httpx get + .json(), same calls", per_call["raw"], "<= 1.10", note),
        Figure("typed decode of the page (msgspec Game structs)", r["decode_typed"] * 1e6, "us",
               "json.loads of the same bytes", r["decode_json"] * 1e6, "-", "client-side work only"),
        Figure("Wire client: deltas applied per second (client.wire.subscribe)", w["deltas"] / w["client"], "deltas/s",
               "raw websockets reader, json.loads only, same replays", w["deltas"] / w["raw"], "-", burst),
        Figure("Wire client-side work per delta (decode, seq check, fold, typed event)", w["apply"] * 1e6, "us",
               "json.loads of the same frames", w["loads"] * 1e6, "-", "the first burst's frames, no socket"),
        Figure(f"resume of {CLIENTS} clients after an API restart (SIGTERM -> all resumed)", rs["after_term"], "s",
               f"{CLIENTS} fresh connections at once (ticket, socket, subscribe, snapshot)", rs["fresh"], "-", restart),
    ]
