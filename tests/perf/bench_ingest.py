"""Ingest rate against a raw aiokafka produce of the same encoded events, same broker, same run.

The input is a generated The Odds API response at season scale (every game of a season,
20 books, three markets each): mostly price quotes, the hot path of a real feed. The ingest
figure is the whole run as `svc ingest odds-api` does it: parse, resolve (registry),
stamp, look up and record appended IDs in Postgres, gathered sends with acks=all. The
baseline sends the very same keyed, encoded records with a bare producer, also gathered per
batch with acks=all, and does nothing else; it runs with the same garbage-collector setting
as an ingest run. (Ingest passes each record's partition, computed once per key with
aiokafka's default partitioner; the baseline lets aiokafka hash every record's key.)
"""

from __future__ import annotations

import asyncio
import random
import time
from datetime import datetime, timedelta, timezone

import msgspec

from infra.kafka import make_producer
from infra.topics import ensure_topics
from ingest import odds_api
from ingest.batches import collect
from ingest.event_log import open_event_log
from ingest.pipeline import fewer_collections, ingest
from ingest.resolution import MemoryResolver
from ingest.team_aliases import NFL_FRANCHISES
from schemas.datasets import topic_name
from schemas.events import encode, event_key, event_topic
from tests.perf.run import BenchContext, Figure

GAMES = 1_200
BOOKS = 20
BATCH = 5_000
ROUNDS = 3


def odds_response(games: int = GAMES, books: int = BOOKS, seed: int = 7) -> bytes:
    rng = random.Random(seed)
    names = [f.name for f in NFL_FRANCHISES]
    start = datetime(2030, 9, 5, 17, tzinfo=timezone.utc)
    events = []
    for g in range(games):
        home, away = rng.sample(names, 2)
        commence = start + timedelta(days=g // 16 * 7, hours=g % 16 // 4 * 3, minutes=g % 4)
        bookmakers = []
        for b in range(books):
            spread = rng.choice((1.5, 2.5, 3, 3.5, 6.5, 7))
            total = rng.choice((40.5, 43, 44.5, 47.5, 51))
            favourite = rng.randint(110, 300)
            bookmakers.append({
                "key": f"book{b}", "title": f"Book {b}", "last_update": "2030-09-01T12:00:00Z",
                "markets": [
                    {"key": "h2h", "outcomes": [{"name": home, "price": -favourite},
                                                {"name": away, "price": max(100, favourite - rng.randint(10, 25))}]},
                    {"key": "spreads", "outcomes": [{"name": home, "price": -110, "point": -spread},
                                                    {"name": away, "price": -110, "point": spread}]},
                    {"key": "totals", "outcomes": [{"name": "Over", "price": -110, "point": total},
                                                   {"name": "Under", "price": -110, "point": total}]},
                ],
            })
        events.append({
            "id": f"{g:032x}", "sport_key": "americanfootball_nfl", "sport_title": "NFL",
            "commence_time": commence.strftime("%Y-%m-%dT%H:%M:%SZ"), "home_team": home, "away_team": away,
            "bookmakers": bookmakers,
        })
    return msgspec.json.encode(events)


async def raw_produce(settings, records: list[tuple[str, bytes, bytes]]) -> float:
    producer = make_producer(settings)
    await producer.start()
    try:
        started = time.perf_counter()
        for i in range(0, len(records), BATCH):
            acks = [await producer.send(t, v, key=k) for t, k, v in records[i:i + BATCH]]
            await asyncio.gather(*acks)
        return time.perf_counter() - started
    finally:
        await producer.stop()


async def _ingest_once(ctx: BenchContext, path):
    settings = await ctx.fresh_settings()
    await ensure_topics(settings, ("live",))
    async with open_event_log(settings, "live") as log:
        first = await ingest(odds_api.parse(path, datetime.now(timezone.utc)), log)
        again = await ingest(odds_api.parse(path, datetime.now(timezone.utc)), log)
    assert first.dead_lettered == 0 and first.accepted == first.events and again.accepted == 0, (first, again)
    return first, again


async def _raw_once(ctx: BenchContext, events) -> float:
    settings = await ctx.fresh_settings()
    await ensure_topics(settings, ("live",))
    records = [
        (topic_name("live", event_topic(e), settings.topic_namespace), event_key(e).encode(), encode(e))
        for e in events
    ]
    with fewer_collections():  # the same collector setting as an ingest run: only the work differs
        return len(records) / await raw_produce(settings, records)


async def run(ctx: BenchContext) -> list[Figure]:
    path = ctx.workdir / "odds_season.json"
    path.write_bytes(odds_response())
    # the same events, encoded and keyed as the pipeline sends them, for the bare producer
    events = collect(odds_api.parse(path, datetime.now(timezone.utc)).items, MemoryResolver()).events
    mean_bytes = sum(len(encode(e)) for e in events) / len(events)
    # the box is shared: alternate the two, ROUNDS times, each into fresh topics, best of each
    firsts, agains, raws = [], [], []
    for _ in range(ROUNDS):
        raws.append(await _raw_once(ctx, events))
        first, again = await _ingest_once(ctx, path)
        assert first.events == len(events)
        firsts.append(first.events_per_second)
        agains.append(again.events_per_second)
    note = (f"{len(events):,} events, {mean_bytes:.0f} B mean, one Odds API file of {GAMES} games x {BOOKS} books; "
            f"best of {ROUNDS}; ingest sends record batches per partition, the baseline send() per record, "
            "both gathered, acks=all")
    return [
        Figure("ingest rate (parse to acked + recorded)", max(firsts), "events/s",
               "raw aiokafka produce, same encoded events", max(raws), ">= 0.5", note),
        Figure("re-ingest rate (every event a duplicate)", max(agains), "events/s",
               "raw aiokafka produce, same encoded events", max(raws), None,
               "nothing sent: parse, resolve, stamp, one lookup per batch"),
    ]
