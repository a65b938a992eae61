"""The Wire fan-out bench's clients (`make bench` only): thousands of WebSocket readers in one
process of their own, each on its own loopback address as real clients are on theirs.

    python -m tests.perf.wire_clients --plan PLAN.json --out OUT.json

PLAN: `{"url": ws URL, "server": "api" | "baseline", "api": http base (api only), "mode": the
dataset the tickets ask for ("live" unless given; "test" for the sandbox), "connections":
[{"address": "127.x.y.z", "topics": [...], "key": API key (api only), "url": ws URL of this one
(optional), "stall": true for one that stops reading once the run begins (optional)}, ...]}`. Against the API a
connection mints a `ws` ticket with its key (POST /v1/wire/tickets), authenticates and subscribes
(its snapshots and the ack come back); against the baseline it only subscribes. Prints `ready N`
once all are open, then reads: for every delta, the receive time (wall clock) and its
`emit_ts`; `ping`s are answered from the moment a socket is open (a stalling one stops reading
once all are open). When stdin closes, writes OUT: per delta received
`[emit_ts as epoch seconds, receive - emit_ts in ms]`, and the connections that closed early.

The reader does the least it can per frame (a substring search for `emit_ts`, parsed only after
the run), so that it, not the server under test, is rarely the bottleneck; it still shares the
machine's cores with the server, the broker and the producer.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from array import array
from datetime import datetime

import httpx
from websockets.asyncio.client import connect

OPEN_AT_ONCE = 50  # connections being opened concurrently
EMIT = '"emit_ts":"'
PONG = json.dumps({"op": "pong"})


async def answer_pings_until(ws, go: asyncio.Event) -> None:
    """Read (answering pings, dropping the rest) until `go` is set. (Cancelling `recv` loses
    nothing, as the websockets library documents.)"""
    started = asyncio.ensure_future(go.wait())
    try:
        while not go.is_set():
            frame = asyncio.ensure_future(ws.recv())
            await asyncio.wait({frame, started}, return_when=asyncio.FIRST_COMPLETED)
            if not frame.done():
                frame.cancel()
                break
            if frame.result().startswith('{"op":"ping"'):
                await ws.send(PONG)
    finally:
        started.cancel()


async def main(args) -> None:
    plan = json.loads(open(args.plan).read())
    server = plan["server"]
    received: list[tuple[float, str]] = []
    append = received.append
    closed: list[str] = []
    gate = asyncio.Semaphore(OPEN_AT_ONCE)
    opened = 0
    go = asyncio.Event()
    http = httpx.AsyncClient(base_url=plan.get("api") or "http://127.0.0.1", timeout=60)

    async def one(spec: dict) -> None:
        nonlocal opened
        async with gate:
            if server == "api":
                r = await http.post("/v1/wire/tickets", json={"transport": "ws", "topics": spec["topics"],
                                                                "mode": plan.get("mode", "live")},
                                    headers={"Authorization": f"Bearer {spec['key']}"})
                if r.status_code != 201:
                    raise RuntimeError(f"ticket refused: {r.status_code} {r.text[:200]}")
                ws = await connect(spec.get("url", plan["url"]), subprotocols=["svc.v1"],
                                   local_addr=(spec["address"], 0), max_size=1 << 22, open_timeout=60,
                                   ping_interval=None)
                await ws.send(json.dumps({"op": "auth", "ticket": r.json()["ticket"]}))
            else:
                ws = await connect(plan["url"], local_addr=(spec["address"], 0), max_size=1 << 22, open_timeout=60,
                                   ping_interval=None)
            await ws.send(json.dumps({"op": "subscribe", "topics": spec["topics"], "request_id": "s"}))
            while True:  # hello and snapshots (api), then the ack
                msg = json.loads(await ws.recv())
                if msg.get("op") == "ack":
                    break
                if msg.get("op") in ("error", "warning"):
                    raise RuntimeError(f"refused: {msg}")
            opened += 1
        try:
            if spec.get("stall"):  # a reader that stops reading once the run begins: its queues fill
                await answer_pings_until(ws, go)
                await asyncio.Event().wait()
            async for frame in ws:
                at = time.time()
                i = frame.find(EMIT)
                if i >= 0 and frame.startswith('{"op":"delta"'):
                    if go.is_set():  # the run's deltas only
                        append((at, frame[i + 11:i + 11 + 40]))
                elif frame.startswith('{"op":"ping"'):
                    # answered from the moment it is open: opening thousands takes long enough on
                    # a busy box for the first ones to be closed for unanswered pings otherwise
                    await ws.send(PONG)
            closed.append(f"closed {ws.close_code}")
        except Exception as exc:  # reported, counted
            closed.append(repr(exc)[:120])

    tasks = [asyncio.create_task(one(spec)) for spec in plan["connections"]]
    while opened < len(tasks):
        failed = [t for t in tasks if t.done() and t.exception() is not None]
        if failed:
            raise failed[0].exception()
        await asyncio.sleep(0.1)
    await http.aclose()
    go.set()
    print(f"ready {opened}", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until stdin closes
    rows = array("d")
    for at, text in received:
        emitted = datetime.fromisoformat(text[: text.index('"')].replace("Z", "+00:00")).timestamp()
        rows.extend((emitted, (at - emitted) * 1000))
    with open(args.out, "w") as out:
        json.dump({"deltas": rows.tolist(), "closed": closed}, out)
    for t in tasks:
        t.cancel()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--plan", required=True)
    parser.add_argument("--out", required=True)
    asyncio.run(main(parser.parse_args()))
