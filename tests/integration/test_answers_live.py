"""A live answer end to end: a market answer about a game not yet played, its Wire topic
`answer:{answer_id}` followed over SSE, a price change published to the feed -> the projector ->
the market's delta -> the API re-derives the answer -> an `answer.update` delta on the answer's
topic whose answer supersedes the one before."""

from __future__ import annotations

import json
from datetime import datetime, time, timedelta, timezone

import msgspec

from schemas.answers import Answer
from tests.integration.access_support import make_key
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
