"""An API process killed outright (SIGKILL: no close frames, no detach, no count-out) with Wire
sockets open: its clients resume on the restarted process within seconds. Its connections stop
counting against the account at once (wire/presence.py), so the plan's limit does not refuse
them; their sessions are resumable (and missed nothing). Real granian, default 20 s pings."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time

import psutil
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

from tests.integration.test_wire_socket import mint, recv
from tests.integration.wire_support import wire_stack
from tests.support import projection_events as ev
from tests.support.live_server import api_process

GAMES = ev.schedule(1)
TOPIC = f"game:{GAMES[0].game_id}"
SUPERVISOR_BACKOFF_SECONDS = 1.0  # `svc up` restarts a dead child after 1 s
BACK_IN_SECONDS = 10.0


def kill_outright(pid: int) -> None:
    """SIGKILL granian and its worker, as the kernel's OOM killer or `kill -9` would."""
    main = psutil.Process(pid)
    for proc in [*main.children(recursive=True), main]:
        os.kill(proc.pid, signal.SIGKILL)


async def resume(url: str, session: dict) -> dict | None:
    """One resume attempt: its hello, or None when refused (the client backs off and retries)."""
    try:
        async with ws_connect(url, subprotocols=["svc.v1"]) as ws:
            await ws.send(json.dumps({"op": "resume", "session_id": session["session_id"],
                                      "resume_token": session["resume_token"], "last_seq": {TOPIC: session["seq"]}}))
            hello = await recv(ws, timeout=5)
            if hello["op"] != "hello":
                return None
            await ws.send(json.dumps({"op": "list_subscriptions", "request_id": "l"}))
            while (ack := await recv(ws, timeout=5))["op"] != "ack":
                pass
            return {"hello": hello, "topics": ack["topics"]}
    except (ConnectionClosed, OSError, asyncio.TimeoutError):
        return None


async def test_clients_of_a_killed_process_are_back_within_seconds(settings, topics, tmp_path):
    async with wire_stack(settings, tmp_path, GAMES) as (c, key, _):
        env = {"KAFKA_BOOTSTRAP": settings.kafka_bootstrap, "SVC_TOPIC_NAMESPACE": settings.topic_namespace}
        sessions, sockets = [], []
        with api_process(settings.database_url, settings.data_dir, settings.key_secret, tmp_path / "killed.log",
                         **env) as (base, proc):
            url = base.replace("http://", "ws://") + "/v1/wire"
            for _ in range(3):  # the free plan's three connections, all on this process
                ticket = await mint(c, key)
                ws = await ws_connect(url, subprotocols=["svc.v1", f"svc.ticket.{ticket['ticket']}"])
                sockets.append(ws)
                hello = await recv(ws)
                await ws.send(json.dumps({"op": "subscribe", "topics": [TOPIC], "request_id": "s"}))
                snapshot = await recv(ws)
                assert (snapshot["op"], snapshot["topic"]) == ("snapshot", TOPIC)
                # the ack comes once the subscription is saved with the session: killed between the
                # snapshot and the save (a loaded box), the resumed session rightly had no topic
                assert (await recv(ws))["op"] == "ack"
                sessions.append({"session_id": hello["session_id"], "resume_token": hello["resume_token"],
                                 "seq": snapshot["seq"]})
            killed_at = time.monotonic()
            kill_outright(proc.pid)
        for ws in sockets:
            await ws.close()
        await asyncio.sleep(SUPERVISOR_BACKOFF_SECONDS)
        with api_process(settings.database_url, settings.data_dir, settings.key_secret, tmp_path / "restarted.log",
                         **env) as (base, _):
            url = base.replace("http://", "ws://") + "/v1/wire"
            back = {}
            while len(back) < len(sessions):
                assert time.monotonic() - killed_at < BACK_IN_SECONDS, f"only {len(back)} resumed in time"
                for i, session in enumerate(sessions):
                    if i not in back and (got := await resume(url, session)) is not None:
                        back[i] = got
                if len(back) < len(sessions):
                    await asyncio.sleep(1.0)  # a refused client backs off at least a second (4100-4199)
            took = time.monotonic() - killed_at
            for i, session in enumerate(sessions):
                assert back[i]["hello"]["session_id"] == session["session_id"]
                assert back[i]["topics"] == [TOPIC]
            print(f"all {len(sessions)} clients back {took:.1f} s after the kill (restart included)")
