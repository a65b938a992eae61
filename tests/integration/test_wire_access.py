"""Who may read what on the Wire, end to end (served API, real broker and Postgres): a topic needs
the scope its REST twin needs, at ticket minting (403 `insufficient_scope` naming the scope), on
subscribe and on resume (`not_entitled` per topic), and when a stream opens; a key revoked or
losing a scope loses its open sockets and streams (or the topic) within seconds."""

from __future__ import annotations

import asyncio
import json
import time

import asyncpg
import pytest
from websockets.asyncio.client import connect as ws_connect

from access.store import revoke_key
from tests.integration.access_support import make_key, problem
from tests.integration.test_wire_socket import closed_with, recv
from tests.integration.test_wire_stream import Events
from tests.integration.wire_support import wire_stack
from tests.support import projection_events as ev

GAMES = ev.schedule(1)
GID = GAMES[0].game_id
MID = ev.market_id(GID, "game", "h2h", "full", None)
TOPIC = f"market:{MID}"
GAME_TOPIC = f"game:{GID}"


async def _set_scopes(settings, key_id_of: str, scopes: list[str]) -> None:
    """Change a key's scopes in the database (an operator's correction)."""
    conn = await asyncpg.connect(settings.database_url)
    try:
        await conn.execute("UPDATE access.api_keys k SET scopes = $2 FROM access.accounts a "
                           "WHERE a.id = k.account_id AND a.name = $1", key_id_of, scopes)
    finally:
        await conn.close()


async def test_topics_need_the_scope_of_their_rest_twin(settings, topics, tmp_path):
    events = [*GAMES, *ev.season_quotes(GAMES, ("dk", "fd"), 1, seed=5)]
    async with wire_stack(settings, tmp_path, events) as (c, reader, base):
        url = base.replace("http://", "ws://") + "/v1/wire"
        wire_only = await make_key(settings, "wire-only", "free", {"wire:connect"})
        auth = {"Authorization": f"Bearer {wire_only}"}
        # the REST twin refuses this key ...
        r = await c.get(f"/v1/markets/{MID}", headers=auth)
        assert (r.status_code, problem(r)["code"], problem(r)["param"]) == (403, "insufficient_scope", "read:odds")
        # ... and so does ticket minting, naming the scope, for either transport and either kind
        for body in ({"transport": "sse", "topics": [TOPIC]}, {"topics": [GAME_TOPIC]},
                     {"topics": ["game:gm_unknown", TOPIC]}):
            r = await c.post("/v1/wire/tickets", json=body, headers=auth)
            assert r.status_code == 403, (body, r.text)
            assert (problem(r)["code"], problem(r)["param"]) == ("insufficient_scope", "read:odds")
        # a ticket for any topic is minted, but subscribing to a market or game is not_entitled
        r = await c.post("/v1/wire/tickets", json={}, headers=auth)
        assert r.status_code == 201, r.text
        async with ws_connect(url, subprotocols=["svc.v1", f"svc.ticket.{r.json()['ticket']}"]) as ws:
            assert (await recv(ws))["op"] == "hello"
            await ws.send(json.dumps({"op": "subscribe", "topics": [TOPIC, GAME_TOPIC], "request_id": "s"}))
            answers = [await recv(ws) for _ in range(3)]
            assert answers[:2] == [
                {"op": "error", "code": "not_entitled", "topic": t, "request_id": "s",
                 "detail": f"The key lacks the scope 'read:odds' that {t.partition(':')[0]} topics need."}
                for t in (TOPIC, GAME_TOPIC)]
            assert answers[2] == {"op": "ack", "request_id": "s", "topics": []}

        # a key with read:odds subscribes; once it loses the scope, its resume drops the topic
        r = await c.post("/v1/wire/tickets", json={}, headers={"Authorization": f"Bearer {reader}"})
        async with ws_connect(url, subprotocols=["svc.v1", f"svc.ticket.{r.json()['ticket']}"]) as ws:
            hello = await recv(ws)
            await ws.send(json.dumps({"op": "subscribe", "topics": [TOPIC], "request_id": "s"}))
            snapshot = await recv(ws)
            assert (snapshot["op"], snapshot["topic"]) == ("snapshot", TOPIC)
            assert (await recv(ws))["topics"] == [TOPIC]
        r = await c.post("/v1/wire/tickets", json={"transport": "sse", "topics": [TOPIC]},
                         headers={"Authorization": f"Bearer {reader}"})
        sse_ticket = r.json()["ticket"]
        await _set_scopes(settings, "acme", ["wire:connect"])
        async with ws_connect(url, subprotocols=["svc.v1"]) as ws:
            await ws.send(json.dumps({"op": "resume", "session_id": hello["session_id"],
                                      "resume_token": hello["resume_token"], "last_seq": {TOPIC: snapshot["seq"]}}))
            assert (await recv(ws))["op"] == "hello"
            refused = await recv(ws)
            assert (refused["op"], refused["code"], refused["topic"]) == ("error", "not_entitled", TOPIC)
            await ws.send(json.dumps({"op": "list_subscriptions", "request_id": "l"}))
            assert await recv(ws) == {"op": "ack", "request_id": "l", "topics": []}
        # a stream opened with a ticket minted before: refused as its REST twin would be
        r = await c.get(f"/v1/stream/{TOPIC}", params={"ticket": sse_ticket})
        assert (r.status_code, problem(r)["code"], problem(r)["param"]) == (403, "insufficient_scope", "read:odds")
        # a key that lost wire:connect opens nothing with a ticket it minted before
        r = await c.post("/v1/wire/tickets", json={}, headers=auth)
        await _set_scopes(settings, "wire-only", ["read:odds"])
        async with ws_connect(url, subprotocols=["svc.v1", f"svc.ticket.{r.json()['ticket']}"]) as ws:
            refused = await recv(ws)
            assert (refused["op"], refused["code"]) == ("error", "insufficient_scope")
            assert await closed_with(ws) == 4030


async def _open_both(c, base: str, key: str):
    """A socket subscribed to TOPIC and a stream of TOPIC, both past their snapshots."""
    auth = {"Authorization": f"Bearer {key}"}
    ws_ticket = (await c.post("/v1/wire/tickets", json={}, headers=auth)).json()["ticket"]
    ws = await ws_connect(base.replace("http://", "ws://") + "/v1/wire", subprotocols=["svc.v1", f"svc.ticket.{ws_ticket}"])
    assert (await recv(ws))["op"] == "hello"
    await ws.send(json.dumps({"op": "subscribe", "topics": [TOPIC], "request_id": "s"}))
    assert (await recv(ws))["op"] == "snapshot"
    assert (await recv(ws))["op"] == "ack"
    sse_ticket = (await c.post("/v1/wire/tickets", json={"transport": "sse", "topics": [TOPIC]}, headers=auth)).json()
    stream_cm = c.stream("GET", f"/v1/stream/{TOPIC}", params={"ticket": sse_ticket["ticket"]})
    response = await stream_cm.__aenter__()
    assert response.status_code == 200
    events = Events(response)
    assert (await events.next())["event"] == "snapshot"
    return ws, stream_cm, events


async def _stream_error(events: Events) -> tuple[str, float]:
    """The code of the stream's `event: error` and when it came; the stream must end right after."""
    while True:
        event = await events.next(timeout=10)
        if event.get("event") == "error":
            at = time.monotonic()
            with pytest.raises(EOFError):
                await events.next(timeout=5)
            return json.loads(event["data"])["code"], at


async def test_a_revoked_key_or_one_losing_a_scope_loses_its_sockets_and_streams(settings, topics, tmp_path):
    events = [*GAMES, *ev.season_quotes(GAMES, ("dk", "fd"), 1, seed=5)]
    async with wire_stack(settings, tmp_path, events) as (c, key, base):
        # revoked: the socket gets `unauthenticated` and closes 4001, the stream ends with that error
        ws, stream_cm, stream = await _open_both(c, base, key)
        conn = await asyncpg.connect(settings.database_url)
        try:
            key_id = await conn.fetchval("SELECT k.id FROM access.api_keys k JOIN access.accounts a "
                                         "ON a.id = k.account_id WHERE a.name = 'acme'")
            revoked_at = time.monotonic()
            assert await revoke_key(conn, key_id)
        finally:
            await conn.close()
        assert (await recv(ws, timeout=5))["code"] == "unauthenticated"
        assert await closed_with(ws, timeout=5) == 4001
        assert await _stream_error(stream) == ("unauthenticated", pytest.approx(revoked_at, abs=5))
        await stream_cm.__aexit__(None, None, None)

        # losing wire:connect: close 4030, the stream ends with insufficient_scope
        other = await make_key(settings, "other", "free", {"wire:connect", "read:odds"})
        ws, stream_cm, stream = await _open_both(c, base, other)
        changed_at = time.monotonic()
        await _set_scopes(settings, "other", ["read:odds"])
        assert (await recv(ws, timeout=5))["code"] == "insufficient_scope"
        assert await closed_with(ws, timeout=5) == 4030
        assert await _stream_error(stream) == ("insufficient_scope", pytest.approx(changed_at, abs=5))
        await stream_cm.__aexit__(None, None, None)

        # losing read:odds: the socket drops the topic (not_entitled) and stays open; the stream ends
        third = await make_key(settings, "third", "free", {"wire:connect", "read:odds"})
        ws, stream_cm, stream = await _open_both(c, base, third)
        changed_at = time.monotonic()
        await _set_scopes(settings, "third", ["wire:connect"])
        refused = await recv(ws, timeout=5)
        assert (refused["op"], refused["code"], refused["topic"]) == ("error", "not_entitled", TOPIC)
        await ws.send(json.dumps({"op": "list_subscriptions", "request_id": "l"}))
        assert await recv(ws) == {"op": "ack", "request_id": "l", "topics": []}
        assert await _stream_error(stream) == ("insufficient_scope", pytest.approx(changed_at, abs=5))
        await stream_cm.__aexit__(None, None, None)
        await ws.close()


async def test_without_announcements_keys_are_read_again_every_few_seconds(settings):
    """A process not listening (its listener down) still closes a revoked key's connections: its
    open connections' keys are read again every SWEEP_SECONDS."""
    from types import SimpleNamespace

    from api.wire_live import SWEEP_SECONDS, LiveConnections
    from infra.db import create_pool
    from wire.fanout import REVOKED, Inbox

    await make_key(settings, "acme", "free", {"wire:connect", "read:odds"})
    pool = await create_pool(settings.database_url, min_size=1, max_size=2)
    live = LiveConnections(SimpleNamespace(pool=pool, listener=SimpleNamespace(connected=False, on_key_revoked=[], on_connected=[])))
    try:
        conn = await asyncpg.connect(settings.database_url)
        try:
            key_id = await conn.fetchval("SELECT id FROM access.api_keys")
            inbox, bystander = Inbox(), Inbox()
            live.enter(inbox, key_id, frozenset({"wire:connect", "read:odds"}))
            live.enter(bystander, "key_other", frozenset({"wire:connect"}))
            await asyncio.sleep(SWEEP_SECONDS + 0.5)
            assert inbox.restart is None  # standing unchanged: nothing happens
            await revoke_key(conn, key_id)
        finally:
            await conn.close()
        revoked_at = time.monotonic()
        while inbox.restart is None:
            assert time.monotonic() - revoked_at < SWEEP_SECONDS + 2
            await asyncio.sleep(0.1)
        assert inbox.restart == REVOKED
        assert bystander.restart == REVOKED  # an unknown key stands for nothing
    finally:
        await live.aclose()
        await pool.close()
