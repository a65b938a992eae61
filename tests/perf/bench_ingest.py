"""Ingest rate against a raw aiokafka produce of the same encoded events, same broker, same run.

The input is a generated The Odds API response at season scale (every game of a season,
20 books, three markets each): mostly price quotes, the hot path of a real feed. The ingest
figure is the whole run as `svc ingest odds-api` does it: parse, resolve (registry),
stamp, look up and record appended IDs in Postgres, gathered sends with acks=all. The
baseline sends the very same keyed, encoded records with a bare producer and does nothing
else, batched as ingest batches them: the events of BATCH_RECORDS source records (an ingest
batch, or several when ingest's batches end earlier at BATCH_TEXT) go out as one record batch
per partition (aiokafka's batch API), gathered, acks=all, before the next group; it runs with
the same garbage-collector setting as an ingest run.
(Ingest computes each key's partition once; the baseline hashes every record's key with
aiokafka's default partitioner, as its send() does.)
"""

from __future__ import annotations

import asyncio
import random
import time
from datetime import datetime, timedelta, timezone

import msgspec
from aiokafka.partitioner import DefaultPartitioner
from aiokafka.producer.message_accumulator import BatchBuilder

from infra.kafka import make_producer
from infra.topics import ensure_topics
from ingest import odds_api
from ingest.batches import RunState, batched, build
from ingest.event_log import open_event_log
from ingest.pipeline import fewer_collections, ingest
from ingest.resolution import MemoryResolver
from ingest.team_aliases import NFL_FRANCHISES
from schemas.datasets import topic_name
from schemas.events import AnyEvent, encode, event_key, event_topic
from tests.perf.run import BenchContext, Figure

GAMES = 1_200
BOOKS = 20
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


async def raw_produce(settings, groups: list[list[tuple[str, bytes, bytes]]]) -> float:
    """Seconds to send (topic, key, value) records, group by group: each group as one record
    batch per partition (a new one when full), gathered and acknowledged before the next."""
    producer = make_producer(settings)
    await producer.start()
    partitioner = DefaultPartitioner()
    try:
        partitions = {t: sorted(await producer.partitions_for(t)) for t in {r[0] for g in groups for r in g}}
        started = time.perf_counter()
        for group in groups:
            builders: dict[tuple[str, int], BatchBuilder] = {}
            acks = []
            for t, k, v in group:
                target = (t, partitioner(k, partitions[t], partitions[t]))
                builder = builders.get(target)
                if builder is None:
                    builder = builders[target] = producer.create_batch()
                if builder.append(key=k, value=v, timestamp=None) is None:
                    acks.append(await producer.send_batch(builder, t, partition=target[1]))
                    builder = builders[target] = producer.create_batch()
                    builder.append(key=k, value=v, timestamp=None)
            for (t, partition), builder in builders.items():
                acks.append(await producer.send_batch(builder, t, partition=partition))
            await asyncio.gather(*acks)
        return time.perf_counter() - started
    finally:
        await producer.stop()


def ingest_batches(path) -> list[list[AnyEvent]]:
    """The file's events, stamped, grouped in BATCH_RECORDS source records (one list per batch).
    Ingest's own batches also end at BATCH_TEXT of source text (~58 games of this file, ~3,500
    events): the baseline keeps the larger groups it had before (~15,600 events, fewer round
    trips to the broker), so the ratio is not flattered by a baseline slowed to ingest's batching."""
    resolver, state = MemoryResolver(), RunState()
    return [build(batch, resolver.resolve_now(batch.records), state).events
            for batch in batched(odds_api.parse(path, datetime.now(timezone.utc)).items, text=1 << 62)]


async def _ingest_once(ctx: BenchContext, path):
    settings = await ctx.fresh_settings()
    await ensure_topics(settings, ("live",))
    async with open_event_log(settings, "live") as log:
        first = await ingest(odds_api.parse(path, datetime.now(timezone.utc)), log)
        again = await ingest(odds_api.parse(path, datetime.now(timezone.utc)), log)
    assert first.dead_lettered == 0 and first.accepted == first.events and again.accepted == 0, (first, again)
    return first, again


async def _raw_once(ctx: BenchContext, batches: list[list[AnyEvent]]) -> float:
    settings = await ctx.fresh_settings()
    await ensure_topics(settings, ("live",))
    groups = [[(topic_name("live", event_topic(e), settings.topic_namespace), event_key(e).encode(), encode(e))
               for e in events] for events in batches]
    with fewer_collections():  # the same collector setting as an ingest run: only the work differs
        return sum(map(len, groups)) / await raw_produce(settings, groups)


async def run(ctx: BenchContext) -> list[Figure]:
    path = ctx.workdir / "odds_season.json"
    path.write_bytes(odds_response())
    # the same events, encoded, keyed and batched as the pipeline sends them, for the bare producer
    batches = ingest_batches(path)
    events = [e for b in batches for e in b]
    mean_bytes = sum(len(encode(e)) for e in events) / len(events)
    # the box is shared: alternate the two, ROUNDS times, each into fresh topics, best of each
    firsts, agains, raws = [], [], []
    for _ in range(ROUNDS):
        raws.append(await _raw_once(ctx, batches))
        first, again = await _ingest_once(ctx, path)
        assert first.events == len(events)
        firsts.append(first.events_per_second)
        agains.append(again.events_per_second)
    note = (f"{len(events):,} events, {mean_bytes:.0f} B mean, one Odds API file of {GAMES} games x {BOOKS} books; "
            f"best of {ROUNDS}; both send each ingest batch's events as record batches per partition, "
            "gathered, acks=all")
    return [
        Figure("ingest rate (parse to acked + recorded)", max(firsts), "events/s",
               "raw aiokafka produce, same encoded events", max(raws), ">= 0.5", note),
        Figure("re-ingest rate (every event a duplicate)", max(agains), "events/s",
               "raw aiokafka produce, same encoded events", max(raws), None,
               "nothing sent: parse, resolve, stamp, one lookup per batch"),
    ]
