"""A live answer end to end: a market answer about a game not yet played, its Wire topic
`answer:{answer_id}` followed over SSE, a price change published to the feed -> the projector ->
the market's delta -> the API re-derives the answer -> an `answer.update` delta on the answer's
topic whose answer supersedes the one before; then the same topic on the socket."""

from __future__ import annotations

import json
from datetime import datetime, time, timedelta, timezone

import msgspec
from websockets.asyncio.client import connect as ws_connect

from schemas.answers import Answer
from tests.integration.access_support import make_key
from tests.integration.test_wire_socket import meanwhile, mint, recv
from tests.integration.test_wire_stream import Events, ticket
from tests.integration.wire_support import wire_stack
from tests.support import projection_events as ev
from tests.support.projection_harness import caught_up

DAY = (datetime.now(timezone.utc) + timedelta(days=2)).date()  # not played yet: its prices can move
GAME = ev.game(home="KC", away="BAL", day=DAY, kickoff=datetime.combine(DAY, time(20), timezone.utc))
TEAMS = [ev.team("KC", "Kansas City Chiefs"), ev.team("BAL", "Baltimore Ravens")]
BOOKS = ("dk", "fd", "mgm")


async def test_a_live_answer_is_superseded_on_its_topic_when_a_price_moves(settings, topics, tmp_path):
    quotes = [ev.quote(GAME.game_id, book, [-150, 130], minute=10 + i) for i, book in enumerate(BOOKS)]
    async with wire_stack(settings, tmp_path, [*TEAMS, GAME, *quotes]) as (c, _, _):
        key = await make_key(settings, "asker", "free", {"wire:connect", "run:answers"})
        auth = {"Authorization": f"Bearer {key}"}
        r = await c.post("/v1/answers", json={"question": "chiefs ravens moneyline"}, headers=auth)
        assert r.status_code == 201, r.text
        first = r.json()
        market_topic = f"market:{ev.market_id(GAME.game_id, 'game', 'h2h', 'full', None)}"
        assert first["category"] == 4 and first["live_topics"] == [market_topic], json.dumps(first)[:3000]
        topic = f"answer:{first['answer_id']}"

        # someone else's answer is not theirs to follow
        other = await make_key(settings, "other", "free", {"wire:connect", "run:answers"})
        async with c.stream("GET", f"/v1/stream/{topic}", params={"ticket": await ticket(c, other, [topic])}) as resp:
            assert resp.status_code == 404

        async with c.stream("GET", f"/v1/stream/{topic}", params={"ticket": await ticket(c, key, [topic])}) as resp:
            assert resp.status_code == 200
            events = Events(resp)
            snap = await events.next()
            envelope = msgspec.json.decode(snap["data"])
            assert (snap["event"], snap["id"], envelope["type"]) == ("snapshot", "1", "answer.update")
            assert envelope["data"] == first  # the answer as served is version 1

            # the home side drifts: the consensus moves, and so does the answer
            await ev.publish(settings, [ev.quote(GAME.game_id, book, [-110, -110], minute=30 + i)
                                        for i, book in enumerate(BOOKS)])
            assert await caught_up(settings, 60)
            event = await events.next(60)
            while event["event"] != "answer.update":  # `feed` may come first
                event = await events.next(60)
            delta = msgspec.json.decode(event["data"])
            assert (event["id"], delta["op"], delta["topic"], delta["seq"]) == ("2", "delta", topic, 2)
            new = delta["data"]
            msgspec.convert(new, Answer)  # the payload the AsyncAPI document gives answer.update
            assert new["supersedes"] == first["answer_id"] and new["answer_id"] != first["answer_id"]
            price = {f["selection_id"]: f["value"] for f in new["figures"] if f["field"] == "consensus_price"}
            assert set(price) == {"home", "away"} and all(abs(p - 1.9091) < 0.001 for p in price.values()), price
            assert [f["value"] for f in first["figures"] if f["field"] == "consensus_price"] != list(price.values())

        # the new version is an answer of its own, read back by its asker
        kept = await c.get(f"/v1/answers/{new['answer_id']}", headers=auth)
        assert kept.status_code == 200 and kept.json()["supersedes"] == first["answer_id"]

        # on the socket: the newest version as the snapshot, then the next one as a delta; and a
        # slate answer, re-derived when its game kicks off
        slate = (await c.post("/v1/answers", json={"question": f"nfl games on {DAY.isoformat()}"}, headers=auth)).json()
        assert slate["category"] == 6 and slate["live_topics"] == [f"game:{GAME.game_id}"], json.dumps(slate)[:2000]
        slate_topic = f"answer:{slate['answer_id']}"
        socket = await mint(c, key, [topic, slate_topic])
        async with ws_connect(socket["url"], subprotocols=["svc.v1"]) as ws:
            await ws.send(json.dumps({"op": "auth", "ticket": socket["ticket"]}))
            assert (await recv(ws))["op"] == "hello"
            await ws.send(json.dumps({"op": "subscribe", "request_id": "r1", "topics": [topic, slate_topic]}))
            snaps = {m["topic"]: m for m in [await recv(ws), await recv(ws)]}
            assert (snaps[topic]["seq"], snaps[topic]["data"]["answer_id"]) == (2, new["answer_id"])
            assert (snaps[slate_topic]["seq"], snaps[slate_topic]["data"]) == (1, slate)
            assert (await recv(ws))["op"] == "ack"
            await meanwhile(ws, ev.publish(settings, [
                *[ev.quote(GAME.game_id, book, [120, -140], minute=60 + i) for i, book in enumerate(BOOKS)],
                ev.state(GAME.game_id, "live", minute=70, home=7, away=0)]))
            got = {}
            while len(got) < 2:
                msg = await recv(ws, 60)
                if msg["op"] == "delta":  # `feed` messages may come between
                    got.setdefault(msg["topic"], msg)
            assert (got[topic]["type"], got[topic]["seq"], got[topic]["data"]["supersedes"]) == (
                "answer.update", 3, new["answer_id"])
            assert (got[slate_topic]["seq"], got[slate_topic]["data"]["supersedes"]) == (2, slate["answer_id"])
            scores = {f["field"]: f["value"] for f in got[slate_topic]["data"]["figures"]}
            assert scores == {"score_home": 7, "score_away": 0}
