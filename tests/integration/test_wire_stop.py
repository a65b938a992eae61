"""A stopping API process closes its Wire connections in order (api/orderly_stop.py): sockets
with 4201 (reconnect now and resume) after their sessions are resumable elsewhere, streams with a
`drain`; only then does the server stop serving. A real server process (h2corn, or the server
SVC_API_SERVER names), real signals."""

from __future__ import annotations

import asyncio
import json
import os
import signal

import httpx
import msgspec
import psutil
from websockets.asyncio.client import connect as ws_connect

from tests.integration.test_wire_socket import closed_with, mint, recv
from tests.integration.test_wire_stream import Events
from tests.integration.wire_support import all_counted_out, wire_stack
from tests.support import projection_events as ev
from tests.support.live_server import api_process

GAMES = ev.schedule(1)
GID = GAMES[0].game_id
TOPIC = f"game:{GID}"


async def test_a_stopping_process_closes_sockets_and_streams_in_order(settings, topics, tmp_path):
    async with wire_stack(settings, tmp_path, GAMES) as (c, key, base):
        env = {"KAFKA_BOOTSTRAP": settings.kafka_bootstrap, "SVC_TOPIC_NAMESPACE": settings.topic_namespace,
               "SVC_WIRE_PING_SECONDS": "0.5"}
        with api_process(settings.database_url, settings.data_dir, settings.key_secret, tmp_path / "stopping.log",
                         **env) as (other, proc):
            socket_url = other.replace("http://", "ws://") + "/v1/wire"
            ticket = await mint(c, key)
            async with ws_connect(socket_url, subprotocols=["svc.v1", f"svc.ticket.{ticket['ticket']}"]) as ws:
                hello = await recv(ws)
                await ws.send(json.dumps({"op": "subscribe", "topics": [TOPIC], "request_id": "s"}))
                snapshot = await recv(ws)
                assert (snapshot["op"], snapshot["topic"]) == ("snapshot", TOPIC)
                assert (await recv(ws))["op"] == "ack"

                stream_ticket = (await mint(c, key, topics=[TOPIC], transport="sse"))["ticket"]
                async with httpx.AsyncClient(base_url=other, timeout=30) as oc, \
                        oc.stream("GET", f"/v1/stream/{TOPIC}", params={"ticket": stream_ticket}) as response:
                    events = Events(response)
                    assert (await events.next())["event"] == "snapshot"

                    # as Ctrl-C under `svc up`: SIGINT reaches the worker and the main process, which
                    # then stops its worker with SIGTERM at once (granian serves from a worker;
                    # uvicorn with one worker from its main process)
                    for worker in psutil.Process(proc.pid).children():
                        os.kill(worker.pid, signal.SIGINT)
                    proc.send_signal(signal.SIGINT)
                    drain = await events.next(10)
                    assert drain["event"] == "drain"
                    assert set(msgspec.json.decode(drain["data"])) == {"deadline_at"}
                    try:
                        await events.next(10)
                        raise AssertionError("the stream went on after its drain")
                    except EOFError:
                        pass  # and then it ends
                    assert await closed_with(ws) == 4201  # reconnect now and resume
                    proc.wait(15)

        # the session is resumable on another process straight away (its first process let it go);
        # nothing was missed, as the log shows: no snapshot, only the topic's current liveness
        async with ws_connect(base.replace("http://", "ws://") + "/v1/wire", subprotocols=["svc.v1"]) as ws:
            await ws.send(json.dumps({"op": "resume", "session_id": hello["session_id"],
                                      "resume_token": hello["resume_token"], "last_seq": {TOPIC: snapshot["seq"]}}))
            resumed = await recv(ws)
            assert (resumed["op"], resumed["session_id"]) == ("hello", hello["session_id"])
            feed = await recv(ws)
            assert (feed["op"], feed["topic"]) == ("feed", TOPIC)
        await asyncio.wait_for(all_counted_out(settings), 20)
