"""The Wire socket end to end: feed events -> the projector process -> wire.deltas -> the served
API (granian) -> a WebSocket client (the `websockets` library). Auth, hello, subscribe with
per-topic refusals, snapshot then deltas by seq, pings, unsubscribe, resume, close codes."""

from __future__ import annotations

import asyncio
import json
import weakref

import httpx
import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.support import projection_events as ev
from tests.integration.wire_support import ALLOWED_ORIGIN, all_counted_out, market_now, wire_stack
from tests.support.live_server import api_server
from tests.support.projection_harness import caught_up
from wire.snapshots import apply_delta

GAMES = ev.schedule(2)
BOOKS = ("dk", "fd", "mgm")
GID = GAMES[0].game_id
MID = ev.market_id(GID, "game", "h2h", "full", None)
TOPIC = f"market:{MID}"
GAME_TOPIC = f"game:{GID}"
MISSING = "market:mkt_0000000000000000000z"


async def mint(c: httpx.AsyncClient, key: str, topics=None, transport="ws") -> dict:
    body = {"transport": transport} | ({"topics": topics} if topics is not None else {})
    r = await c.post("/v1/wire/tickets", json=body, headers={"Authorization": f"Bearer {key}"})
    assert r.status_code == 201, r.text
    return r.json()


# Messages read by `meanwhile` while the test was busy, in order, per socket: `recv` gives them first.
_HELD: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


async def _unpinged(ws) -> dict | None:
    """The next message, or None for a ping (answered)."""
    msg = json.loads(await ws.recv())
    if msg.get("op") != "ping":
        return msg
    await ws.send(json.dumps({"op": "pong", "ts": msg["ts"]}))
    return None


async def recv(ws, timeout: float = 20) -> dict:
    """The next message that is not a ping (pings are answered), within `timeout` in all."""
    if held := _HELD.get(ws):
        return held.pop(0)

    async def next_message() -> dict:
        while (msg := await _unpinged(ws)) is None:
            pass
        return msg

    return await asyncio.wait_for(next_message(), timeout)


async def meanwhile(ws, work):
    """Await `work` (publishing, waiting for the projector) while still reading the socket: pings
    are answered and other messages held for `recv`, in order. A client that leaves two pings
    unanswered is closed 4100, and on a loaded machine `work` can take longer than that."""
    task = asyncio.ensure_future(work)
    held = _HELD.setdefault(ws, [])
    try:
        while not task.done():
            reading = asyncio.ensure_future(_unpinged(ws))
            await asyncio.wait({task, reading}, return_when=asyncio.FIRST_COMPLETED)
            if not reading.done():
                reading.cancel()  # websockets: a cancelled recv() loses no message
                await asyncio.gather(reading, return_exceptions=True)
            elif (msg := reading.result()) is not None:
                held.append(msg)
        return task.result()
    finally:
        task.cancel()


async def closed_with(ws, timeout: float = 10) -> int:
    with pytest.raises(ConnectionClosed) as info:
        while True:
            await asyncio.wait_for(ws.recv(), timeout)
    return info.value.rcvd.code


async def test_the_socket_serves_topics_by_seq_and_resumes(settings, topics, tmp_path):
    async with wire_stack(settings, tmp_path, [*GAMES, *ev.season_quotes(GAMES, BOOKS, 2, seed=3)]) as (c, key, base):
        session = await _subscribe_stream_and_unsubscribe(settings, c, key)
        session["resume_token"] = await _resume(session)
        await _resume_on_another_process(settings, c, key, tmp_path, session)
        await all_counted_out(settings)
        await _refusals_and_close_codes(c, key, base)


async def _subscribe_stream_and_unsubscribe(settings, c, key) -> dict:
    ticket = await mint(c, key)
    assert ticket["url"].startswith("ws://") and ticket["url"].endswith("/v1/wire")
    first_seq, _ = await market_now(settings, MID)
    async with ws_connect(ticket["url"], subprotocols=["svc.v1"]) as ws:
        assert ws.subprotocol == "svc.v1"
        await ws.send(json.dumps({"op": "auth", "ticket": ticket["ticket"]}))
        hello = await recv(ws)
        assert hello["op"] == "hello" and hello["session_id"].startswith("wses_")
        assert (hello["mode"], hello["resume_seconds"], hello["limits"]) == (
            "live", 120, {"topics": 50, "inbound_per_second": 20, "max_frame_bytes": 65536})
        assert hello["rg_line"] and hello["resume_token"]

        await ws.send(json.dumps({"op": "subscribe", "request_id": "r1",
                                  "topics": [TOPIC, GAME_TOPIC, "Bad:x", MISSING]}))
        got = [await recv(ws) for _ in range(4)]
        errors = {(g["topic"], g["code"], g["request_id"]) for g in got if g["op"] == "error"}
        assert errors == {("Bad:x", "invalid_request", "r1"), (MISSING, "not_found", "r1")}
        snapshots = {g["topic"]: g for g in got if g["op"] == "snapshot"}
        assert set(snapshots) == {TOPIC, GAME_TOPIC}
        assert snapshots[TOPIC]["seq"] == first_seq and snapshots[TOPIC]["rg_line"]
        ack = await recv(ws)
        assert ack == {"op": "ack", "request_id": "r1", "topics": sorted([TOPIC, GAME_TOPIC])}

        state = snapshots[TOPIC]["data"]
        await meanwhile(ws, ev.publish(settings, [ev.quote(GID, book, prices, minute=300 + i) for i, (book, prices) in
                                                  enumerate([("dk", [-300, 250]), ("fd", [-280, 230]), ("mgm", [-260, 210])])]))
        # keep reading (and answering pings, a second apart here) while the projector catches up:
        # a client that stops reading for two pings is closed 4100
        catching_up = asyncio.create_task(caught_up(settings, 60))
        seen, last_seq = [], None
        while last_seq is None or not seen or seen[-1] < last_seq:
            if last_seq is None and catching_up.done():
                assert catching_up.result()
                last_seq, expected = await market_now(settings, MID)
                continue
            try:
                delta = await recv(ws, timeout=0.5)
            except asyncio.TimeoutError:
                continue
            assert delta["op"] == "delta" and delta["topic"] == TOPIC, delta
            seen.append(delta["seq"])
            state = apply_delta(state, delta["type"], delta["data"])
        assert seen == list(range(first_seq + 1, last_seq + 1)) and state == expected

        ping = json.loads(await asyncio.wait_for(ws.recv(), 5))
        assert ping["op"] == "ping" and ping["ts"].endswith("Z")
        await ws.send(json.dumps({"op": "unsubscribe", "topics": [GAME_TOPIC], "request_id": "r2"}))
        assert await recv(ws) == {"op": "ack", "request_id": "r2", "topics": [TOPIC]}
        await ws.send(json.dumps({"op": "list_subscriptions", "request_id": "r3"}))
        assert await recv(ws) == {"op": "ack", "request_id": "r3", "topics": [TOPIC]}
        await ws.send(json.dumps({"op": "warp"}))
        assert (await recv(ws))["code"] == "invalid_request"
    return {"session_id": hello["session_id"], "resume_token": hello["resume_token"], "url": ticket["url"],
            "first_seq": first_seq, "last_seq": last_seq}


async def _resume(session) -> None:
    resume = {"op": "resume", "session_id": session["session_id"], "resume_token": session["resume_token"],
              "last_seq": {TOPIC: session["first_seq"]}}
    async with ws_connect(session["url"], subprotocols=["svc.v1"]) as ws:
        await ws.send(json.dumps(resume))
        hello = await recv(ws)
        assert hello["op"] == "hello" and hello["session_id"] == session["session_id"]
        assert hello["resume_token"] != session["resume_token"]  # a new token in every hello
        replayed = [await recv(ws) for _ in range(session["last_seq"] - session["first_seq"])]
        assert [(d["op"], d["seq"]) for d in replayed] == [
            ("delta", s) for s in range(session["first_seq"] + 1, session["last_seq"] + 1)]
        # what the client last heard of the topic's liveness is unknown to the server: it says it
        feed = await recv(ws)
        assert (feed["op"], feed["topic"], feed["liveness"]["state"]) == ("feed", TOPIC, "stale")
        new_token = hello["resume_token"]
    # the old token no longer works: resume_failed, then 4011
    async with ws_connect(session["url"], subprotocols=["svc.v1"]) as ws:
        await ws.send(json.dumps(resume))
        assert await recv(ws) == {"op": "resume_failed", "topics": [TOPIC]}
        assert await closed_with(ws) == 4011
    return new_token


async def _resume_on_another_process(settings, c, key, tmp_path, session) -> None:
    """Sessions live in Postgres: a second API process takes the session over. It saw none of
    the deltas (it started after them): it reads what the client missed from the retained log.
    A seq the log cannot vouch for gets resume_failed and a snapshot."""
    env = {"KAFKA_BOOTSTRAP": settings.kafka_bootstrap, "SVC_TOPIC_NAMESPACE": settings.topic_namespace,
           "SVC_WIRE_PING_SECONDS": "0.5"}
    first, last = session["first_seq"], session["last_seq"]
    with api_server(settings.database_url, settings.data_dir, settings.key_secret, tmp_path / "api2.log", **env) as base:
        url = base.replace("http://", "ws://") + "/v1/wire"
        async with ws_connect(url, subprotocols=["svc.v1"]) as ws:
            await ws.send(json.dumps({"op": "resume", "session_id": session["session_id"],
                                      "resume_token": session["resume_token"], "last_seq": {TOPIC: first}}))
            hello = await recv(ws)
            assert (hello["op"], hello["session_id"]) == ("hello", session["session_id"])
            replayed = [await recv(ws) for _ in range(last - first)]
            assert [(d["op"], d["topic"], d["seq"]) for d in replayed] == [
                ("delta", TOPIC, s) for s in range(first + 1, last + 1)]
            assert (await recv(ws))["op"] == "feed"
            token = hello["resume_token"]
        async with ws_connect(url, subprotocols=["svc.v1"]) as ws:  # a seq the topic never reached
            await ws.send(json.dumps({"op": "resume", "session_id": session["session_id"], "resume_token": token,
                                      "last_seq": {TOPIC: last + 100}}))
            assert (await recv(ws))["op"] == "hello"
            assert await recv(ws) == {"op": "resume_failed", "topics": [TOPIC]}
            snapshot = await recv(ws)
            assert (snapshot["op"], snapshot["topic"], snapshot["seq"]) == ("snapshot", TOPIC, last)
        # a stream resumed with Last-Event-ID on this process: replayed from the log too
        ticket = await mint(c, key, topics=[TOPIC], transport="sse")
        async with httpx.AsyncClient(base_url=base, timeout=30) as other, other.stream(
                "GET", f"/v1/stream/{TOPIC}", params={"ticket": ticket["ticket"]},
                headers={"Last-Event-ID": str(first)}) as response:
            lines = response.aiter_lines()
            ids = []
            while len(ids) < last - first:
                line = await asyncio.wait_for(lines.__anext__(), 20)
                if line.startswith("event: "):
                    assert line != "event: snapshot"
                if line.startswith("id: "):
                    ids.append(int(line[4:]))
            assert ids == list(range(first + 1, last + 1))


async def _refusals_and_close_codes(c, key, base) -> None:
    url = base.replace("http://", "ws://") + "/v1/wire"
    # the ticket offered as a second subprotocol; bound to one topic
    bound = await mint(c, key, topics=[TOPIC])
    async with ws_connect(url, subprotocols=["svc.v1", f"svc.ticket.{bound['ticket']}"]) as ws:
        assert (await recv(ws))["op"] == "hello"
        await ws.send(json.dumps({"op": "subscribe", "topics": [GAME_TOPIC], "request_id": "x"}))
        refused = await recv(ws)
        assert (refused["op"], refused["code"], refused["topic"]) == ("error", "not_entitled", GAME_TOPIC)
        assert await recv(ws) == {"op": "ack", "request_id": "x", "topics": []}
    # the free plan's 50 topics: the 51st is refused, the rest each answered on their own
    async with ws_connect(url, subprotocols=["svc.v1", f"svc.ticket.{(await mint(c, key))['ticket']}"]) as ws:
        assert (await recv(ws))["op"] == "hello"
        await ws.send(json.dumps({"op": "subscribe", "topics": [f"game:t{i}" for i in range(51)], "request_id": "y"}))
        answers = [await recv(ws) for _ in range(51)]
        codes = sorted(a["code"] for a in answers)
        assert codes == ["not_found"] * 50 + ["too_many_topics"]
        assert await recv(ws) == {"op": "ack", "request_id": "y", "topics": []}
    # a used ticket, an sse ticket, garbage: error unauthenticated, close 4001
    for bad in (bound["ticket"], (await mint(c, key, topics=[TOPIC], transport="sse"))["ticket"], "wtkt_nope"):
        async with ws_connect(url, subprotocols=["svc.v1"]) as ws:
            await ws.send(json.dumps({"op": "auth", "ticket": bad}))
            assert (await recv(ws))["code"] == "unauthenticated"
            assert await closed_with(ws) == 4001
    # a browser from an origin not allowed is refused the upgrade (403); from the allowed one it
    # gets in (origins per ticket kind: test_wire_origins.py)
    with pytest.raises(InvalidStatus) as refused:
        async with ws_connect(url, subprotocols=["svc.v1"], origin="https://evil.example"):
            pass
    assert refused.value.response.status_code == 403
    async with ws_connect(url, subprotocols=["svc.v1", f"svc.ticket.{(await mint(c, key))['ticket']}"],
                          origin=ALLOWED_ORIGIN) as ws:
        assert (await recv(ws))["op"] == "hello"
    async with ws_connect(url, subprotocols=["svc.v1"]) as ws:  # the first message must be auth or resume
        await ws.send(json.dumps({"op": "subscribe", "topics": [TOPIC]}))
        assert await closed_with(ws) == 4003
    async with ws_connect(url, subprotocols=["svc.v1"]) as ws:  # nothing within 5 s
        assert await closed_with(ws, timeout=10) == 4002
    ticket = await mint(c, key)
    async with ws_connect(url, subprotocols=["svc.v1"]) as ws:  # frames over 64 KiB
        await ws.send(json.dumps({"op": "auth", "ticket": ticket["ticket"]}))
        assert (await recv(ws))["op"] == "hello"
        await ws.send(json.dumps({"op": "subscribe", "topics": ["game:x" * 20_000]}))
        assert await closed_with(ws) == 1009
    with pytest.raises(Exception):  # a key in the URL refuses the handshake
        async with ws_connect(url + f"?api_key={key}", subprotocols=["svc.v1"]):
            pass
