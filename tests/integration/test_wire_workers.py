"""An API process with two workers (SVC_API_WORKERS=2, under the server SVC_API_SERVER names:
h2corn unless set) serves the Wire as one worker does: WebSocket clients and SSE streams spread
over both workers each get every delta of their topic, in order, for as long as deltas flow
(here 25 s), and none is closed; REST keeps answering meanwhile. Stopped as `svc up` stops it
(SIGTERM to the process group), every worker closes its connections in order, as one worker does
(test_wire_stop): sockets 4201, streams a `drain`. Under h2corn's own supervisor (its command
line, which served SVC_API_WORKERS>1 until infra/h2corn_serve.py did) they were closed 1001.

The deltas are written to `wire.deltas` by the test; what serves them is each worker's own
fan-out. The sockets come from three loopback addresses (the Wire allows 5 per address)."""

from __future__ import annotations

import asyncio
import json
import signal

import httpx
import psutil
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

from tests.integration.access_support import make_key
from tests.integration.test_wire_socket import mint, recv
from tests.integration.test_wire_stream import Events
from tests.integration.wire_support import flood_deltas, wire_stack
from tests.support import projection_events as ev
from tests.support.live_server import api_process

GAMES = ev.schedule(1)
GID = GAMES[0].game_id
MID = ev.market_id(GID, "game", "h2h", "full", None)
TOPIC = f"market:{MID}"
ADDRESSES = ("127.0.0.1", "127.0.0.2", "127.0.0.3")
SOCKETS_PER_ADDRESS, STREAMS = 2, 2
DELTAS, PER_TENTH = 500, 2  # 20 a second for 25 s


def _got(kind: str) -> dict:
    """What one reader saw: the seq its snapshot was at, each delta's seq, anything else, how it
    ended; `subscribed` and `all_in` (delta `target["last"]` came) as they happen."""
    return {"kind": kind, "from": None, "seqs": [], "other": [], "close": None,
            "subscribed": asyncio.Event(), "all_in": asyncio.Event()}


async def socket_reader(url: str, c, key: str, address: str, target: dict, got: dict) -> None:
    """One socket from `address` subscribed to TOPIC, read (pings answered) until it closes."""
    ticket = await mint(c, key)
    try:
        async with ws_connect(url, subprotocols=["svc.v1", f"svc.ticket.{ticket['ticket']}"],
                              local_addr=(address, 0)) as ws:
            assert (await recv(ws))["op"] == "hello"
            await ws.send(json.dumps({"op": "subscribe", "topics": [TOPIC], "request_id": "s"}))
            snapshot = await recv(ws)
            assert (snapshot["op"], snapshot["topic"]) == ("snapshot", TOPIC)
            got["from"] = snapshot["seq"]
            got["subscribed"].set()
            while True:
                msg = await recv(ws, 120)
                if msg["op"] == "delta":
                    got["seqs"].append(msg["seq"])
                    if msg["seq"] == target.get("last"):
                        got["all_in"].set()
                elif msg["op"] not in ("ack", "feed"):
                    got["other"].append(msg)
    except ConnectionClosed as closed:
        got["close"] = closed.rcvd.code if closed.rcvd else "no close frame"


async def stream_reader(base: str, c, key: str, target: dict, got: dict) -> None:
    """One SSE stream of TOPIC, read until it ends."""
    ticket = (await mint(c, key, topics=[TOPIC], transport="sse"))["ticket"]
    async with httpx.AsyncClient(base_url=base, timeout=120) as sc, \
            sc.stream("GET", f"/v1/stream/{TOPIC}", params={"ticket": ticket}) as response:
        assert response.status_code == 200
        events = Events(response)
        snapshot = await events.next()
        assert snapshot["event"] == "snapshot"
        got["from"] = int(snapshot["id"])
        got["subscribed"].set()
        try:
            while True:
                event = await events.next(120)
                if event.get("event") == "market.update":
                    got["seqs"].append(int(event["id"]))
                    if int(event["id"]) == target.get("last"):
                        got["all_in"].set()
                elif event.get("event") != "feed":
                    got["other"].append(event)
        except (EOFError, httpx.HTTPError) as exc:
            got["close"] = "ended" if isinstance(exc, EOFError) else repr(exc)


def connected_workers(workers: list[psutil.Process], port: int) -> int:
    """How many of the worker processes hold an established client connection."""
    return sum(1 for worker in workers
               if any(conn.status == psutil.CONN_ESTABLISHED and conn.laddr.port == port
                      for conn in worker.net_connections("tcp")))


async def test_two_workers_serve_sockets_and_streams_for_the_whole_flow(settings, topics, tmp_path):
    events = [*GAMES, *ev.season_quotes(GAMES, ("dk", "fd"), 1, seed=11)]
    async with wire_stack(settings, tmp_path, events) as (_, _, _):
        key = await make_key(settings, "workers", "scale", {"wire:connect", "read:odds"})
        auth = {"Authorization": f"Bearer {key}"}
        env = {"KAFKA_BOOTSTRAP": settings.kafka_bootstrap, "SVC_TOPIC_NAMESPACE": settings.topic_namespace,
               "SVC_WIRE_PING_SECONDS": "2", "SVC_API_WORKERS": "2"}
        with api_process(settings.database_url, settings.data_dir, settings.key_secret, tmp_path / "workers.log",
                         **env) as (base, proc):
            url = base.replace("http://", "ws://") + "/v1/wire"
            async with httpx.AsyncClient(base_url=base, timeout=30) as c:
                target: dict = {}
                readers: list[dict] = []
                tasks: list[asyncio.Task] = []

                async def socket_from(address: str) -> None:
                    readers.append(got := _got("socket"))
                    tasks.append(asyncio.create_task(socket_reader(url, c, key, address, target, got)))
                    await asyncio.wait_for(got["subscribed"].wait(), 60)

                for address in ADDRESSES:
                    for _ in range(SOCKETS_PER_ADDRESS):
                        await socket_from(address)
                for _ in range(STREAMS):
                    readers.append(got := _got("stream"))
                    tasks.append(asyncio.create_task(stream_reader(base, c, key, target, got)))
                    await asyncio.wait_for(got["subscribed"].wait(), 60)
                # the clients spread over both workers: the kernel hands each connection to one,
                # at random; one more socket (from an address of its own) until both have some
                workers = psutil.Process(proc.pid).children()
                assert len(workers) == 2, workers
                port = int(base.rsplit(":", 1)[1])
                extra = 0
                while connected_workers(workers, port) < 2:
                    assert extra < 20, "every connection went to one worker"
                    extra += 1
                    await socket_from(f"127.0.1.{extra}")
                seq = readers[0]["from"]
                assert all(got["from"] == seq for got in readers)
                target["last"] = last = seq + DELTAS

                flow = asyncio.create_task(flood_deltas(settings, TOPIC, seq + 1, DELTAS, PER_TENTH))
                answers = []
                while not flow.done():  # REST keeps answering meanwhile
                    r = await c.get(f"/v1/markets/{MID}", headers=auth)
                    answers.append(r.status_code)
                    await asyncio.sleep(0.5)
                await flow
                await asyncio.wait([asyncio.ensure_future(got["all_in"].wait()) for got in readers], timeout=60)
                flowed = [(got["close"], list(got["seqs"]), list(got["other"])) for got in readers]

                # stopped as `svc up` stops it: SIGTERM to its process group, the server's main
                # process and every worker at once
                for process in [psutil.Process(proc.pid), *psutil.Process(proc.pid).children()]:
                    process.send_signal(signal.SIGTERM)
                done, pending = await asyncio.wait(tasks, timeout=30)
                for task in pending:
                    task.cancel()
                for task in done:
                    task.result()  # a reader's own failure
                assert proc.wait(20) == 0

    assert len(answers) > 20 and set(answers) == {200}, answers
    for i, (close, seqs, other) in enumerate(flowed):  # while the deltas flowed
        assert close is None, f"reader {i} closed {close} after {len(seqs)} deltas"
        assert seqs == list(range(seq + 1, last + 1)), f"reader {i}: {len(seqs)} of {DELTAS} deltas"
        assert other == [], other
    for i, got in enumerate(readers):  # on the stop: in order, as with one worker (test_wire_stop)
        if got["kind"] == "socket":
            assert got["close"] == 4201, f"socket {i} closed {got['close']}, not 4201 (reconnect now and resume)"
        else:
            assert [e["event"] for e in got["other"]] == ["drain"] and got["close"] == "ended", got
