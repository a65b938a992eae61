"""A browser's EventSource on a stream from another origin, as the browser drives it (httpx here,
doing what the HTML standard says EventSource does): CORS preflight and headers for allowed
origins only; a reconnect to the same URL (the spent ticket) with `Last-Event-ID` resumes with
the missed deltas; the `last_event_id` query parameter for clients that cannot set headers (the
header wins); an origin the ticket's kind does not allow is refused before the ticket is used."""

from __future__ import annotations

import httpx

from tests.integration.access_support import problem
from tests.integration.test_wire_stream import Events, ticket
from tests.integration.wire_support import ALLOWED_ORIGIN, market_now, wire_stack
from tests.support import projection_events as ev
from tests.support.projection_harness import caught_up

GAMES = ev.schedule(1)
GID = GAMES[0].game_id
MID = ev.market_id(GID, "game", "h2h", "full", None)
TOPIC = f"market:{MID}"
EVIL = "https://evil.example"
BROWSER = {"Origin": ALLOWED_ORIGIN, "Accept": "text/event-stream"}


async def _changes(settings, minute: int, n: int = 2) -> None:
    await ev.publish(settings, [ev.quote(GID, book, [-150 - i, 130 + i], minute=minute + i)
                                for i, book in enumerate(("dk", "fd")[:n])])
    assert await caught_up(settings, 60)


async def test_an_event_source_from_another_origin_reads_and_reconnects(settings, topics, tmp_path):
    events = [*GAMES, *ev.season_quotes(GAMES, ("dk", "fd"), 1, seed=9)]
    async with wire_stack(settings, tmp_path, events) as (c, key, base):
        path = f"/v1/stream/{TOPIC}"
        # the preflight a browser may send (Last-Event-ID is not a safelisted header)
        r = await c.options(path, headers={"Origin": ALLOWED_ORIGIN, "Access-Control-Request-Method": "GET",
                                           "Access-Control-Request-Headers": "last-event-id"})
        assert r.status_code == 204
        assert r.headers["access-control-allow-origin"] == ALLOWED_ORIGIN
        assert "Last-Event-ID" in r.headers["access-control-allow-headers"]
        assert "GET" in r.headers["access-control-allow-methods"]
        r = await c.options(path, headers={"Origin": EVIL, "Access-Control-Request-Method": "GET"})
        assert "access-control-allow-origin" not in r.headers

        # another origin: refused before the ticket is used, no CORS headers
        spare = await ticket(c, key)
        r = await c.get(path, params={"ticket": spare}, headers={**BROWSER, "Origin": EVIL})
        assert (r.status_code, problem(r)["code"], problem(r)["param"]) == (403, "not_entitled", "Origin")
        assert "access-control-allow-origin" not in r.headers

        # the allowed origin reads the stream
        url_ticket = await ticket(c, key)
        async with c.stream("GET", path, params={"ticket": url_ticket}, headers=BROWSER) as r:
            assert r.status_code == 200
            assert r.headers["access-control-allow-origin"] == ALLOWED_ORIGIN
            stream = Events(r)
            snapshot = await stream.next()
            assert snapshot["event"] == "snapshot"
            last_id = int(snapshot["id"])
        # changes while the page is disconnected; EventSource reconnects to the same URL itself
        await _changes(settings, 400)
        now_seq, _ = await market_now(settings, MID)
        assert now_seq > last_id
        async with c.stream("GET", path, params={"ticket": url_ticket},
                            headers={**BROWSER, "Last-Event-ID": str(last_id)}) as r:
            assert r.status_code == 200, await r.aread()
            assert r.headers["access-control-allow-origin"] == ALLOWED_ORIGIN
            stream = Events(r)
            replayed = [await stream.next() for _ in range(now_seq - last_id)]
            assert [int(e["id"]) for e in replayed] == list(range(last_id + 1, now_seq + 1))
            assert {e["event"] for e in replayed} == {"market.update"}
            assert (await stream.next())["event"] == "feed"
        # the spent ticket reopens its own stream only, and the unused spare is still good
        r = await c.get(f"/v1/stream/game:{GID}", params={"ticket": url_ticket}, headers=BROWSER)
        assert (r.status_code, problem(r)["code"]) == (403, "not_entitled")
        assert r.headers["access-control-allow-origin"] == ALLOWED_ORIGIN  # the page may read why

        # `last_event_id` in the query, for clients that cannot set headers
        await _changes(settings, 500, n=1)
        newest, _ = await market_now(settings, MID)
        async with c.stream("GET", path, params={"ticket": spare, "last_event_id": str(now_seq)},
                            headers=BROWSER) as r:
            stream = Events(r)
            event = await stream.next()
            assert (event["event"], int(event["id"])) == ("market.update", newest)
        # the header wins over the query
        async with c.stream("GET", path, params={"ticket": await ticket(c, key), "last_event_id": "1"},
                            headers={**BROWSER, "Last-Event-ID": str(newest)}) as r:
            assert (await Events(r).next())["event"] == "feed"  # current: nothing to replay
        r = await c.get(path, params={"ticket": await ticket(c, key), "last_event_id": "x1"})
        assert (r.status_code, problem(r)["code"], problem(r)["param"]) == (400, "invalid_request", "last_event_id")
        # a ticket never minted opens nothing
        async with httpx.AsyncClient(base_url=base, timeout=10) as other:
            r = await other.get(path, params={"ticket": "wtkt_" + "0" * 20}, headers=BROWSER)
        assert (r.status_code, problem(r)["code"]) == (401, "unauthenticated")
