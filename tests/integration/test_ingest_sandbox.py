"""The sandbox day on the `test` log: pre-game at once, in-game paced, resumable, idempotent;
the `live` log never sees it."""

from __future__ import annotations

import time
from collections import Counter
from datetime import datetime, timezone

import msgspec

from infra.topics import ensure_topics
from ingest.event_log import open_event_log
from ingest.export import read_log
from ingest.samples import SAMPLES, load
from ingest.sandbox.day import build_day
from ingest.sandbox.play import play
from schemas.events import decode


async def test_sample_load_writes_the_pre_game_then_play_writes_the_day(settings, topics):
    loaded = await load(settings, live=False, test=True)
    pregame = loaded["test/sandbox pre-game"]
    assert (pregame.records, pregame.accepted, pregame.duplicate) == (939, 939, 0)
    assert [r async for r in read_log(settings, "live")] == []

    day = build_day(SAMPLES, datetime.now(timezone.utc))
    async with open_event_log(settings, "test") as log:  # as if a first player stopped a third of the way in
        await log.append(day.ingame[: len(day.ingame) // 3])
    played = await play(settings, SAMPLES, speed=None)
    assert played.events == len(day.ingame) == 5086
    assert (played.accepted, played.duplicate) == (5086 - 5086 // 3, 5086 // 3)

    # the reference library and the strategy registry are loaded into `test` as well (test keys
    # read them): count them apart
    content = loaded["test/reference library"].accepted + loaded["test/strategy registry"].accepted
    assert loaded["test/reference library"].accepted > 0 and loaded["test/strategy registry"].accepted > 0
    events = [decode(r.value) async for r in read_log(settings, "test")]
    assert len(events) == 939 + 5086 + content == len({e.event_id for e in events})
    events = [e for e in events if not type(e).__name__.startswith(("Reference", "Strategy", "Recipe"))]
    assert len(events) == 939 + 5086
    finals = [e for e in events if type(e).__name__ == "GameStateChanged" and e.status == "final"]
    assert len(finals) == 13
    assert Counter(e.source for e in events)["svc simulation"] > 4000
    assert all(e.ingest_ts > datetime(2025, 1, 1, tzinfo=timezone.utc) for e in events)  # taken in now

    again = await play(settings, SAMPLES, speed=None)
    assert (again.accepted, again.duplicate) == (0, 5086)
    reloaded = await load(settings, live=False, test=True)
    assert reloaded["test/sandbox pre-game"].accepted == 0


async def test_play_keeps_the_days_relative_timing(settings, topics):
    day = build_day(SAMPLES, datetime.now(timezone.utc))
    span = (day.ingame[-1].source_ts - day.ingame[0].source_ts).total_seconds()
    speed = span / 2.0  # the whole day in two seconds
    other = msgspec.structs.replace(settings, topic_namespace=settings.topic_namespace + "paced.")
    await ensure_topics(other)
    started = time.monotonic()
    summary = await play(other, SAMPLES, speed=speed)
    took = time.monotonic() - started
    assert summary.accepted == 5086 and 2.0 <= took < 8.0
    records = [r async for r in read_log(other, "test")]
    stamps = sorted(r.timestamp_ms for r in records)
    # the in-game part went out over about two seconds, not all at once
    assert (stamps[-1] - stamps[0]) / 1000 >= 1.7
