"""A client that holds a topic's latest seq resumes on a quiet topic (no delta within the resume
window, so neither the process's memory nor the retained log can vouch for it): no
`resume_failed`, no snapshot, and the topic's next delta follows. The window is shortened to 3 s
(`SVC_WIRE_RESUME_SECONDS`) so that a topic turns quiet within the test."""

from __future__ import annotations

import asyncio
import json

import httpx
from websockets.asyncio.client import connect as ws_connect

from tests.integration.test_wire_socket import meanwhile, mint, recv
from tests.integration.test_wire_stream import Events
from tests.integration.wire_support import wire_stack
from tests.support import projection_events as ev
from tests.support.live_server import api_server
from tests.support.projection_harness import caught_up

GAMES = ev.schedule(1)
GID = GAMES[0].game_id
MID = ev.market_id(GID, "game", "h2h", "full", None)
TOPIC = f"market:{MID}"
GAME_TOPIC = f"game:{GID}"
WINDOW = 3


async def _quiet(ws, seconds: float) -> None:
    """Stay connected `seconds` (pings answered); nothing but pings and feeds may come."""
    loop = asyncio.get_running_loop()
    until = loop.time() + seconds
    while (left := until - loop.time()) > 0:
        try:
            msg = await recv(ws, timeout=left)
        except asyncio.TimeoutError:
            return
        assert msg["op"] == "feed", msg


async def test_a_current_client_resumes_a_quiet_topic(settings, topics, tmp_path):
    events = [*GAMES, *ev.season_quotes(GAMES, ("dk", "fd"), 1, seed=7)]
    async with wire_stack(settings, tmp_path, events) as (c, key, _):
        env = {"KAFKA_BOOTSTRAP": settings.kafka_bootstrap, "SVC_TOPIC_NAMESPACE": settings.topic_namespace,
               "SVC_WIRE_PING_SECONDS": "1", "SVC_WIRE_RESUME_SECONDS": str(WINDOW)}
        with api_server(settings.database_url, settings.data_dir, settings.key_secret, tmp_path / "quiet.log",
                        **env) as base:
            url = base.replace("http://", "ws://") + "/v1/wire"
            ticket = await mint(c, key)
            async with ws_connect(url, subprotocols=["svc.v1", f"svc.ticket.{ticket['ticket']}"]) as ws:
                hello = await recv(ws)
                assert hello["resume_seconds"] == WINDOW
                await ws.send(json.dumps({"op": "subscribe", "topics": [TOPIC, GAME_TOPIC], "request_id": "s"}))
                seqs = {}
                while (msg := await recv(ws))["op"] != "ack":
                    if msg["op"] == "snapshot":
                        seqs[msg["topic"]] = msg["seq"]
                assert set(seqs) == {TOPIC, GAME_TOPIC}
                await _quiet(ws, WINDOW + 1.5)  # no delta within the window: both topics are quiet
            async with ws_connect(url, subprotocols=["svc.v1"]) as ws:
                await ws.send(json.dumps({"op": "resume", "session_id": hello["session_id"],
                                          "resume_token": hello["resume_token"], "last_seq": seqs}))
                assert (await recv(ws))["op"] == "hello"
                feeds = [await recv(ws) for _ in range(2)]  # one per resumed topic, nothing else
                assert sorted((f["op"], f["topic"]) for f in feeds) == [("feed", GAME_TOPIC), ("feed", TOPIC)]
                # the topic's next change follows at seq + 1
                await meanwhile(ws, ev.publish(settings, [ev.quote(GID, "dk", [-150, 130], minute=500)]))
                assert await meanwhile(ws, caught_up(settings, 60))
                delta = await recv(ws)
                assert (delta["op"], delta["topic"], delta["seq"]) == ("delta", TOPIC, seqs[TOPIC] + 1)
                seqs[TOPIC] += 1

            # a stream resumed with the latest seq of a quiet topic: no snapshot either
            sse = await mint(c, key, topics=[TOPIC], transport="sse")
            async with httpx.AsyncClient(base_url=base, timeout=30) as client:
                async with client.stream("GET", f"/v1/stream/{TOPIC}", params={"ticket": sse["ticket"]}) as r:
                    stream = Events(r)
                    assert (await stream.next())["event"] == "snapshot"
                await asyncio.sleep(WINDOW + 1.5)
                sse = await mint(c, key, topics=[TOPIC], transport="sse")
                async with client.stream("GET", f"/v1/stream/{TOPIC}", params={"ticket": sse["ticket"]},
                                         headers={"Last-Event-ID": str(seqs[TOPIC])}) as r:
                    stream = Events(r)
                    assert (await stream.next())["event"] == "feed"
                    await ev.publish(settings, [ev.quote(GID, "fd", [-160, 140], minute=501)])
                    event = await stream.next()
                    assert (event["event"], int(event["id"])) == ("market.update", seqs[TOPIC] + 1)
