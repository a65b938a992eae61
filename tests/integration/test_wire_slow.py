"""Slow consumers on the Wire socket, side by side on one topic (real broker, real granian): a
reader that keeps up gets every delta and is never warned; a slow reader is warned
(`slow_consumer`) and then closed 4108 once its send queue overflows; a stalled reader is
closed 4108 too, although its sender is stuck writing to it. And with the server itself behind, only
the stalled reader is blamed.

The deltas are written to `wire.deltas` by the test (each padded to 8 KiB with a member clients
ignore), so that several MB pass in a few seconds; what serves them is the real fan-out. The
send queue is bounded small here (200 deltas, 1 MiB). The server's and the kernel's buffers hold
a few MB more for a reader that does not read (about 2.8 MB on Linux loopback), which the volume
covers."""

from __future__ import annotations

import asyncio
import json
import socket
import time

from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

from tests.integration.test_wire_socket import mint, recv
from tests.integration.wire_support import flood_deltas, wire_stack
from tests.support import projection_events as ev
from tests.support.live_server import api_server

GAMES = ev.schedule(1)
GID = GAMES[0].game_id
MID = ev.market_id(GID, "game", "h2h", "full", None)
TOPIC = f"market:{MID}"
DELTAS, PAD, PER_SECOND = 1200, 8192, 300
QUEUE_MESSAGES, QUEUE_BYTES = 200, 1 << 20


async def subscribed(url: str, c, key: str, receive_buffer: int | None = None):
    """A socket subscribed to TOPIC; `receive_buffer`: the client's kernel receive buffer, fixed
    (else Linux grows it to many MB for a reader that reads, and the send queue never fills)."""
    ticket = await mint(c, key)
    sock = None
    if receive_buffer is not None:
        host, port = url.split("//")[1].split("/")[0].split(":")
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        sock.connect((host, int(port)))
        sock.setblocking(False)
    ws = await ws_connect(url, subprotocols=["svc.v1", f"svc.ticket.{ticket['ticket']}"], max_queue=4, sock=sock)
    assert (await recv(ws))["op"] == "hello"
    await ws.send(json.dumps({"op": "subscribe", "topics": [TOPIC], "request_id": "s"}))
    snapshot = await recv(ws)
    assert (snapshot["op"], snapshot["topic"]) == ("snapshot", TOPIC)
    assert (await recv(ws))["op"] == "ack"
    return ws, snapshot["seq"]


async def read(ws, pace: float, until: float, fast_after: asyncio.Event | None = None,
               last: int | None = None, got: dict | None = None) -> dict:
    """Read (answering pings) one message per `pace` seconds (0: as fast as it comes; from when
    `fast_after` is set, too) until the socket closes, delta `last` came or `until`; what was read
    and how it ended."""
    got = {"seqs": [], "warnings": [], "snapshots": 0, "close": None} if got is None else got
    try:
        while time.monotonic() < until:
            try:
                msg = json.loads(await asyncio.wait_for(ws.recv(), until - time.monotonic()))
            except asyncio.TimeoutError:
                break
            if msg["op"] == "ping":
                await ws.send(json.dumps({"op": "pong", "ts": msg["ts"]}))
            elif msg["op"] == "delta":
                got["seqs"].append(msg["seq"])
                if msg["seq"] == last:
                    break
            elif msg["op"] == "warning":
                got["warnings"].append(msg["code"])
            elif msg["op"] == "snapshot":
                got["snapshots"] += 1
            if pace and not (fast_after and fast_after.is_set()):
                await asyncio.sleep(pace)
    except ConnectionClosed as closed:
        got["close"] = closed.rcvd.code if closed.rcvd else None
    return got


async def test_stalled_slow_and_fast_readers_side_by_side(settings, topics, tmp_path):
    events = [*GAMES, *ev.season_quotes(GAMES, ("dk", "fd"), 1, seed=11)]
    async with wire_stack(settings, tmp_path, events) as (c, key, _):
        env = {"KAFKA_BOOTSTRAP": settings.kafka_bootstrap, "SVC_TOPIC_NAMESPACE": settings.topic_namespace,
               "SVC_WIRE_SEND_QUEUE_MESSAGES": str(QUEUE_MESSAGES), "SVC_WIRE_SEND_QUEUE_BYTES": str(QUEUE_BYTES)}
        with api_server(settings.database_url, settings.data_dir, settings.key_secret, tmp_path / "slow.log",
                        **env) as base:
            url = base.replace("http://", "ws://") + "/v1/wire"
            fast, seq = await subscribed(url, c, key)
            slow, _ = await subscribed(url, c, key, receive_buffer=64 * 1024)
            stalled, _ = await subscribed(url, c, key, receive_buffer=64 * 1024)
            produced = asyncio.Event()
            until = time.monotonic() + 60
            fast_read = asyncio.create_task(read(fast, 0, until, last=seq + DELTAS))
            slow_read = asyncio.create_task(read(slow, 0.05, until, fast_after=produced))
            await flood_deltas(settings, TOPIC, seq + 1, DELTAS, PER_SECOND // 10, data={"padding": "x" * PAD})
            produced.set()
            fast_got = await fast_read
            await asyncio.sleep(3)  # the stalled reader's close takes its course
            slow_got = await slow_read
            stalled_got = await read(stalled, 0, time.monotonic() + 30)  # it reads only now
            await fast.close()

    assert fast_got["seqs"] == list(range(seq + 1, seq + DELTAS + 1))  # every one, in order
    assert fast_got["warnings"] == [] and fast_got["close"] is None
    # warned before it is closed (once it reads what the server's buffers held)
    assert slow_got["warnings"] and set(slow_got["warnings"]) == {"slow_consumer"} and slow_got["close"] == 4108
    assert len(slow_got["seqs"]) < DELTAS
    assert stalled_got["close"] == 4108 and len(stalled_got["seqs"]) < DELTAS


BUSY_DELTAS, BUSY_PAD, BUSY_PER_SECOND = 800, 32 * 1024, 100
BUSY_QUEUE_MESSAGES, BUSY_QUEUE_BYTES = 1000, 4 << 20  # 128 deltas; 4x that, 16 MiB, is more than the run offers


async def test_a_server_behind_blames_no_reader_that_keeps_up(settings, topics, tmp_path):
    """The server itself is behind (tests/integration/busy_api_app.py holds its loop 20 ms at every
    turn, so it writes a socket at most ~50 frames a second) while 100 deltas of 32 KiB a second
    arrive: every connection's queue grows, the fast reader's as much as the stalled one's. Only
    the stalled reader, whose own writes stop completing, is closed 4108; the fast reader is
    never warned nor closed and still answers at the end. Before slow was judged per connection
    both were closed 4108."""
    events = [*GAMES, *ev.season_quotes(GAMES, ("dk", "fd"), 1, seed=11)]
    async with wire_stack(settings, tmp_path, events) as (c, key, _):
        env = {"KAFKA_BOOTSTRAP": settings.kafka_bootstrap, "SVC_TOPIC_NAMESPACE": settings.topic_namespace,
               "SVC_WIRE_SEND_QUEUE_MESSAGES": str(BUSY_QUEUE_MESSAGES),
               "SVC_WIRE_SEND_QUEUE_BYTES": str(BUSY_QUEUE_BYTES)}
        with api_server(settings.database_url, settings.data_dir, settings.key_secret, tmp_path / "busy.log",
                        app="tests.integration.busy_api_app:app", **env) as base:
            url = base.replace("http://", "ws://") + "/v1/wire"
            fast, seq = await subscribed(url, c, key)
            stalled, _ = await subscribed(url, c, key, receive_buffer=64 * 1024)
            until = time.monotonic() + 90
            fast_got = {"seqs": [], "warnings": [], "snapshots": 0, "close": None}  # kept when cancelled
            fast_read = asyncio.create_task(read(fast, 0, until, last=seq + BUSY_DELTAS, got=fast_got))
            await flood_deltas(settings, TOPIC, seq + 1, BUSY_DELTAS, BUSY_PER_SECOND // 10,
                               data={"padding": "x" * BUSY_PAD})
            stalled_got = await read(stalled, 0, time.monotonic() + 30)  # it reads only now
            fast_read.cancel()  # it read all it could meanwhile
            await asyncio.gather(fast_read, return_exceptions=True)
            await fast.send(json.dumps({"op": "list_subscriptions", "request_id": "alive"}))
            while (answer := await recv(fast))["op"] != "ack":
                pass
            await fast.close()

    assert stalled_got["close"] == 4108
    assert answer["request_id"] == "alive"  # the fast reader's connection is still open
    assert fast_got["warnings"] == [] and fast_got["close"] is None
    assert fast_got["seqs"] and fast_got["seqs"] == sorted(set(fast_got["seqs"]))  # in order, none twice
