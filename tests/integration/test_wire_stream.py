"""GET /v1/stream/{topic} end to end: feed events -> the projector process -> wire.deltas -> the
served API (granian) -> a streaming HTTP client. Snapshot, then every delta in seq order;
resume with Last-Event-ID; tickets are single-use and bound to their topics; open streams are
counted per account and given back when a client goes away."""

from __future__ import annotations

import asyncio
import time

import httpx
import msgspec

from tests.support import projection_events as ev
from tests.integration.wire_support import all_counted_out, market_now, wire_stack
from tests.support.projection_harness import caught_up
from wire.snapshots import apply_delta

GAMES = ev.schedule(2)
BOOKS = ("dk", "fd", "mgm")
GID = GAMES[0].game_id
MID = ev.market_id(GID, "game", "h2h", "full", None)
TOPIC = f"market:{MID}"


class Events:
    """Server-sent events from a streaming response, one at a time (comments counted apart)."""

    def __init__(self, response: httpx.Response) -> None:
        self._lines = response.aiter_lines()
        self.comments = 0

    async def next(self, timeout: float = 20) -> dict:
        return await asyncio.wait_for(self._next(), timeout)

    async def comment(self, timeout: float = 5) -> str:
        """The next comment line (pings), skipping nothing else: none may come in between."""
        line = await asyncio.wait_for(self._lines.__anext__(), timeout)
        while line == "":
            line = await asyncio.wait_for(self._lines.__anext__(), timeout)
        assert line.startswith(":"), line
        return line

    async def _next(self) -> dict:
        event: dict = {}
        async for line in self._lines:
            if line == "":
                if event:
                    return event
                continue
            if line.startswith(":"):
                self.comments += 1
                continue
            name, _, value = line.partition(":")
            event[name] = value[1:] if value.startswith(" ") else value
        raise EOFError("the stream ended")


async def ticket(client: httpx.AsyncClient, key: str, topics=(TOPIC,), transport="sse") -> str:
    r = await client.post("/v1/wire/tickets", json={"transport": transport, "topics": list(topics)},
                          headers={"Authorization": f"Bearer {key}"})
    assert r.status_code == 201, r.text
    return r.json()["ticket"]


async def test_snapshot_then_deltas_in_seq_order_resume_and_refusals(settings, topics, tmp_path):
    async with wire_stack(settings, tmp_path, [*GAMES, *ev.season_quotes(GAMES, BOOKS, 2, seed=3)]) as (c, key, _):
        await _stream_and_resume(settings, c, key)
        await all_counted_out(settings)
        await _refusals(c, key)
        await all_counted_out(settings)
        await _open_streams_are_counted_and_given_back(c, key)


async def _stream_and_resume(settings, c: httpx.AsyncClient, key: str) -> None:
    first_seq, _ = await market_now(settings, MID)
    r = await c.post("/v1/wire/tickets", json={"transport": "sse", "topics": [TOPIC]},
                     headers={"Authorization": f"Bearer {key}"})
    url = r.json()["url"]
    assert url == f"{base_of(c)}/v1/stream/{TOPIC}"
    async with c.stream("GET", url, params={"ticket": r.json()["ticket"]}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["cache-control"] == "no-store"
        events = Events(response)
        snap = await events.next()
        assert (snap["event"], int(snap["id"])) == ("snapshot", first_seq)
        envelope = msgspec.json.decode(snap["data"])
        assert (envelope["op"], envelope["topic"], envelope["seq"]) == ("snapshot", TOPIC, first_seq)
        assert set(envelope["liveness"]) == {"state", "as_of", "limit_seconds"}
        assert set(envelope["expected_latency"]) == {"seconds", "basis", "source"}
        assert envelope["rg_line"]
        state = envelope["data"]

        # new prices move the consensus: deltas follow, seq by seq
        await ev.publish(settings, [ev.quote(GID, book, prices, minute=300 + i)
                                    for i, (book, prices) in enumerate([("dk", [-300, 250]), ("fd", [-280, 230]),
                                                                        ("mgm", [-260, 210]), ("dk", [-120, 100])])])
        assert await caught_up(settings, 60)
        last_seq, expected = await market_now(settings, MID)
        assert last_seq > first_seq
        seen = []
        while not seen or seen[-1] < last_seq:
            event = await events.next()
            assert event["event"] in ("market.update", "market.suspended"), event
            delta = msgspec.json.decode(event["data"])
            assert delta["seq"] == int(event["id"])
            seen.append(delta["seq"])
            state = apply_delta(state, delta["type"], delta["data"])
        assert seen == list(range(first_seq + 1, last_seq + 1))
        assert state == expected  # snapshot + deltas = the read model now
        assert await events.comment() == ": ping"  # idle: pinged (every second here)

    # resume: a new ticket and Last-Event-ID replay what was missed, no snapshot first
    params = {"ticket": await ticket(c, key)}
    async with c.stream("GET", f"/v1/stream/{TOPIC}", params=params,
                        headers={"Last-Event-ID": str(first_seq)}) as response:
        events = Events(response)
        replayed = [int((await events.next())["id"]) for _ in range(last_seq - first_seq)]
        assert replayed == list(range(first_seq + 1, last_seq + 1))
        feed = await events.next()  # then what the topic's liveness is now
        assert feed["event"] == "feed" and msgspec.json.decode(feed["data"])["liveness"]["state"] == "stale"
    # a seq the topic never reached (say, from before the log was rebuilt): a fresh snapshot first
    params = {"ticket": await ticket(c, key)}
    async with c.stream("GET", f"/v1/stream/{TOPIC}", params=params,
                        headers={"Last-Event-ID": str(last_seq + 100)}) as response:
        event = await Events(response).next()
        assert (event["event"], int(event["id"])) == ("snapshot", last_seq)


def base_of(c: httpx.AsyncClient) -> str:
    return str(c.base_url).rstrip("/")


async def _refusals(c: httpx.AsyncClient, key: str) -> None:
    used = await ticket(c, key)
    async with c.stream("GET", f"/v1/stream/{TOPIC}", params={"ticket": used}) as response:
        assert response.status_code == 200
    other_topic = f"game:{GID}"
    cases = [
        (f"/v1/stream/{TOPIC}", {}, 401, "unauthenticated", "ticket"),
        # spent: it reopens only its own stream (test_wire_browser.py), never another topic's
        (f"/v1/stream/{other_topic}", {"ticket": used}, 403, "not_entitled", "topic"),
        (f"/v1/stream/{TOPIC}", {"ticket": await ticket(c, key, transport="ws", topics=[TOPIC])}, 401,
         "unauthenticated", "ticket"),  # minted for the socket
        (f"/v1/stream/{other_topic}", {"ticket": await ticket(c, key)}, 403, "not_entitled", "topic"),
        ("/v1/stream/Market:x", {"ticket": await ticket(c, key)}, 400, "invalid_request", "topic"),
        ("/v1/stream/market:mkt_0000000000000000000z", {"ticket": await ticket(c, key, ["market:mkt_0000000000000000000z"])},
         404, "not_found", "topic"),
        (f"/v1/stream/{TOPIC}", {"ticket": "wtkt_" + "0" * 20}, 401, "unauthenticated", "ticket"),
    ]
    for path, params, status, code, param in cases:
        r = await c.get(path, params=params)
        assert r.status_code == status, (path, params, r.text)
        body = r.json()
        assert (body["code"], body["param"]) == (code, param), (path, body)
    r = await c.get(f"/v1/stream/{TOPIC}", params={"api_key": key})
    assert (r.status_code, r.json()["code"]) == (400, "credential_in_url")


async def _open_streams_are_counted_and_given_back(c: httpx.AsyncClient, key: str) -> None:
    # the free plan allows 3 open streams per account
    opened = []
    try:
        for _ in range(3):
            cm = c.stream("GET", f"/v1/stream/{TOPIC}", params={"ticket": await ticket(c, key)})
            response = await cm.__aenter__()
            opened.append(cm)
            assert response.status_code == 200
        r = await c.get(f"/v1/stream/{TOPIC}", params={"ticket": await ticket(c, key)})
        assert (r.status_code, r.json()["code"]) == (429, "rate_limited")
    finally:
        for cm in opened[:1]:
            await cm.__aexit__(None, None, None)
    # one went away: the server notices at its next write (pings every second) and counts it out
    deadline = time.monotonic() + 10
    while True:
        async with c.stream("GET", f"/v1/stream/{TOPIC}", params={"ticket": await ticket(c, key)}) as response:
            if response.status_code == 200:
                break
        assert time.monotonic() < deadline, "a closed stream was never counted out"
        await asyncio.sleep(0.3)
    for cm in opened[1:]:
        await cm.__aexit__(None, None, None)
