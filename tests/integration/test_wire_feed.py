"""`feed` messages end to end (a `feed` reports changes to a topic's expected latency
or liveness): feed events stamped relative to the wall clock -> the projector process ->
wire.deltas -> the served API -> a socket and a stream. A quiet topic turns stale by time, a
change makes it live again, a final game settles, and its market settles with it (which no market
delta says: the API reads it from the read models)."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import datetime, timedelta, timezone

import httpx
import msgspec
from websockets.asyncio.client import connect as ws_connect

from tests.integration.test_wire_socket import meanwhile, mint, recv
from tests.integration.test_wire_stream import Events
from tests.integration.wire_support import wire_stack
from tests.support import projection_events as ev

GAMES = ev.schedule(2)
GID, OTHER = GAMES[0].game_id, GAMES[1].game_id
MID = ev.market_id(GID, "game", "h2h", "full", None)
GAME_TOPIC, MARKET_TOPIC, OTHER_TOPIC = f"game:{GID}", f"market:{MID}", f"game:{OTHER}"


def ago(seconds: float) -> float:
    """The `minute` of the projection event builders for `seconds` before now."""
    moment = datetime.now(timezone.utc) - timedelta(seconds=seconds)
    return (moment - ev.BASE).total_seconds() / 60


def said(feed: dict) -> tuple:
    return (feed["liveness"]["state"], feed["expected_latency"]["seconds"], feed["liveness"]["limit_seconds"])


async def feeds_until(ws, wanted: dict[str, int], timeout: float = 45) -> dict[str, list[dict]]:
    """`feed` messages by topic until each topic in `wanted` has that many (deltas are skipped)."""
    got: dict[str, list[dict]] = {}
    deadline = time.monotonic() + timeout
    while any(len(got.get(t, [])) < n for t, n in wanted.items()):
        msg = await recv(ws, deadline - time.monotonic())
        if msg["op"] == "feed":
            assert set(msg) == {"op", "topic", "expected_latency", "liveness"}
            got.setdefault(msg["topic"], []).append(msg)
        else:
            assert msg["op"] == "delta", msg
    return got


async def test_feed_messages_follow_liveness_and_settlement(settings, topics, tmp_path):
    quotes = [ev.quote(GID, book, prices, minute=5) for book, prices in (("dk", [-150, 130]), ("fd", [-140, 120]))]
    async with wire_stack(settings, tmp_path, [*GAMES, *quotes]) as (c, key, _):
        # side by side: each waits out its own liveness limits (7 s and 6 s on the socket, 7 s on
        # the stream), on topics of its own (the stream's game is not the socket's)
        await asyncio.gather(_on_the_socket(settings, c, key), _on_a_stream(settings, c, key))


async def _on_the_socket(settings, c: httpx.AsyncClient, key: str) -> None:
    ticket = await mint(c, key)
    async with ws_connect(ticket["url"], subprotocols=["svc.v1", f"svc.ticket.{ticket['ticket']}"]) as ws:
        assert (await recv(ws))["op"] == "hello"
        await ws.send(json.dumps({"op": "subscribe", "topics": [GAME_TOPIC, MARKET_TOPIC], "request_id": "s"}))
        snapshots = {}
        while len(snapshots) < 2:
            msg = await recv(ws)
            assert msg["op"] == "snapshot", msg
            snapshots[msg["topic"]] = msg
        assert (await recv(ws))["op"] == "ack"
        # event times from 2024: both stale, a scheduled game refreshed within 5 minutes, a market 30 s
        assert said(snapshots[GAME_TOPIC]) == ("stale", 300, 300)
        assert said(snapshots[MARKET_TOPIC]) == ("stale", 30, 30)

        # the game goes live (a change 8 s ago, live games refresh within 15 s): live now, stale
        # about 7 s later with nothing new
        await meanwhile(ws, ev.publish(settings, [ev.state(GID, "live", minute=ago(8))]))
        feeds = await feeds_until(ws, {GAME_TOPIC: 2})
        assert [said(f) for f in feeds[GAME_TOPIC]] == [("live", 15, 15), ("stale", 15, 15)]
        assert feeds[GAME_TOPIC][0]["expected_latency"]["source"] == "sandbox"
        assert feeds[GAME_TOPIC][0]["liveness"]["as_of"] == feeds[GAME_TOPIC][1]["liveness"]["as_of"]
        assert MARKET_TOPIC not in feeds  # nothing changed for it

        # a new price 24 s ago: the market is live; then the game ends: the game is settled at
        # once (its delta says final), the market when its 30 s run out (the read model says so)
        await meanwhile(ws, ev.publish(settings, [ev.quote(GID, "dk", [-160, 140], minute=ago(24)),
                                                  ev.state(GID, "final", minute=ago(0), home=27, away=20)]))
        feeds = await feeds_until(ws, {GAME_TOPIC: 1, MARKET_TOPIC: 2})
        assert [said(f) for f in feeds[GAME_TOPIC]] == [("settled", None, None)]
        assert [said(f) for f in feeds[MARKET_TOPIC]] == [("live", 30, 30), ("settled", None, None)]


async def _on_a_stream(settings, c: httpx.AsyncClient, key: str) -> None:
    r = await c.post("/v1/wire/tickets", json={"transport": "sse", "topics": [OTHER_TOPIC]},
                     headers={"Authorization": f"Bearer {key}"})
    assert r.status_code == 201, r.text
    async with c.stream("GET", r.json()["url"], params={"ticket": r.json()["ticket"]}) as response:
        events = Events(response)
        snap = await events.next()
        assert snap["event"] == "snapshot" and said(msgspec.json.decode(snap["data"]))[0] == "stale"
        await ev.publish(settings, [ev.state(OTHER, "live", minute=ago(8))])
        named = []
        while len(named) < 3:
            event = await events.next(30)
            named.append(event["event"])
            if event["event"] == "feed":
                assert "id" not in event  # ids are seqs; a feed has none
                feed = msgspec.json.decode(event["data"])
                assert (feed["op"], feed["topic"]) == ("feed", OTHER_TOPIC)
                named[-1] = ("feed", said(feed))
        assert named == ["game.state", ("feed", ("live", 15, 15)), ("feed", ("stale", 15, 15))]
