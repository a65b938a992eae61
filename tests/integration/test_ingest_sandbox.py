"""The sandbox day on the `test` log: pre-game at once, in-game paced, resumable, idempotent;
the `live` log never sees it."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import msgspec

from infra.topics import ensure_topics
from ingest import pacing
from ingest.event_log import open_event_log
from ingest.export import read_log
from ingest.samples import SAMPLES, load
from api.queries.games import served_status
from infra.db import connect
from ingest.sandbox.clock import SandboxClock, ingame_on, pregame_on
from ingest.sandbox.day import build_day
from ingest.sandbox.play import play
from schemas.events import decode
from tests.support.projection_harness import projector, run_to_end


async def test_sample_load_writes_the_pre_game_then_play_writes_the_day(settings, topics):
    loaded = await load(settings, live=False, test=True)
    pregame = loaded["test/sandbox pre-game"]
    assert (pregame.records, pregame.accepted, pregame.duplicate) == (939, 939, 0)
    assert [r async for r in read_log(settings, "live")] == []
    reloaded = await load(settings, live=False, test=True)
    assert reloaded["test/sandbox pre-game"].accepted == 0  # the same run's pre-game

    # as if a first player, started an hour ago at real speed, stopped a third of the way in:
    # the run resumes on its own clock, what fell due meanwhile at once
    day = build_day(SAMPLES, datetime.now(timezone.utc))
    clock = SandboxClock(datetime.now(timezone.utc) - timedelta(hours=16), 1.0)  # the day is over by now
    async with open_event_log(settings, "test") as log:
        await log.conn.execute("INSERT INTO ingest.sandbox_runs (log_id, run, anchor, speed, started) "
                               "VALUES ($1, 1, $2, 1, true) ON CONFLICT (log_id, run) DO UPDATE SET anchor = $2, "
                               "started = true", log.appended.log_id, clock.anchor)
        await log.append(pregame_on(day, clock) + ingame_on(day, clock)[: len(day.ingame) // 3])
    played = await play(settings, SAMPLES, speed=None)
    assert played.events == len(day.ingame) == 5086
    assert (played.accepted, played.duplicate) == (5086 - 5086 // 3, 5086 // 3)

    # the reference library and the strategy registry are loaded into `test` as well (test keys
    # read them): count them apart
    content = loaded["test/reference library"].accepted + loaded["test/strategy registry"].accepted
    assert loaded["test/reference library"].accepted > 0 and loaded["test/strategy registry"].accepted > 0
    events = [decode(r.value) async for r in read_log(settings, "test")]
    on_clock = sum(1 for e in day.pregame if type(e).__name__ == "GameScheduled" or e.source == "svc simulation")
    # the first run's pre-game as loaded, then on the clock the stopped player had
    assert len(events) == 939 + on_clock + 5086 + content == len({e.event_id for e in events})
    events = [e for e in events if not type(e).__name__.startswith(("Reference", "Strategy", "Recipe"))]
    finals = [e for e in events if type(e).__name__ == "GameStateChanged" and e.status == "final"]
    assert len(finals) == 13 and all(clock.anchor < e.source_ts < datetime.now(timezone.utc) for e in finals)
    assert Counter(e.source for e in events)["svc simulation"] > 4000
    assert all(e.ingest_ts > datetime(2025, 1, 1, tzinfo=timezone.utc) for e in events)  # taken in now


async def test_the_sandbox_follows_its_clock_and_a_finished_day_plays_again(settings, topics):
    """Reproduces issue 19 item 20: the day's times were 2024's, so no sandbox game was ever
    live by the clock, and playing a finished day appended nothing."""
    runs = []
    for _ in range(2):
        before = datetime.now(timezone.utc)
        summary = await play(settings, SAMPLES, speed=None)  # the whole day within a second
        runs.append((before, datetime.now(timezone.utc), summary))
    assert (runs[0][2].accepted, runs[1][2].accepted) == (5086, 5086)  # the second run: the day again
    events = [decode(r.value) async for r in read_log(settings, "test")]
    for before, after, _ in runs:
        mine = [e for e in events if before <= e.source_ts <= after]
        kickoffs = {e.game_id: e.kickoff_at for e in mine if type(e).__name__ == "GameScheduled"}
        assert len(kickoffs) == 13 and all(before <= k <= after for k in kickoffs.values())
        states = [e for e in mine if type(e).__name__ == "GameStateChanged" and e.status != "scheduled"]
        assert {e.game_id for e in states} == set(kickoffs)
        assert all(e.source_ts >= kickoffs[e.game_id] for e in states)  # live from kickoff, by the clock
    resets = [e for e in events if type(e).__name__ == "GameStateChanged" and e.status == "scheduled"]
    assert len(resets) == 13 and all(runs[1][0] <= e.source_ts for e in resets)  # run 2 opens with them

    async with projector(settings, "test", relay=False) as p:
        await run_to_end(p)
    conn = await connect(settings.database_url)
    try:
        rows = await conn.fetch(f"SELECT {served_status()} AS status, kickoff_at, as_of, score_home FROM test.games g")
    finally:
        await conn.close()
    assert len(rows) == 13 and {r["status"] for r in rows} == {"final"}
    assert all(r["kickoff_at"] >= runs[1][0] and r["as_of"] >= runs[1][0] for r in rows)  # the second run's day
    assert all(r["score_home"] is not None for r in rows)


async def test_play_keeps_the_days_relative_timing(settings, topics, monkeypatch):
    day = build_day(SAMPLES, datetime.now(timezone.utc))
    span = (day.ingame[-1].source_ts - day.ingame[0].source_ts).total_seconds()
    speed = span / 2.0  # the whole day in two seconds
    other = msgspec.structs.replace(settings, topic_namespace=settings.topic_namespace + "paced.")
    await ensure_topics(other)
    # the waits the pacing asks for (its module's asyncio only): how long play waits on the day's
    # clock, apart from how long its appends take on this machine (a wall-time bound of 8 s failed
    # under load 17: 18 s, the appends' time)
    waits: list[float] = []

    async def wait(seconds: float) -> None:
        waits.append(seconds)
        await asyncio.sleep(seconds)

    monkeypatch.setattr(pacing, "asyncio", SimpleNamespace(sleep=wait))
    started = time.monotonic()
    summary = await play(other, SAMPLES, speed=speed)
    took = time.monotonic() - started
    assert summary.accepted == 5086 and 2.0 <= took
    # it waited for the clock and no longer: never more in all than the two seconds the day
    # lasts at this speed (each wait only until the next event is due)
    assert waits and sum(waits) <= 2.0 + 1e-6, sum(waits)
    records = [r async for r in read_log(other, "test")]
    stamps = sorted(r.timestamp_ms for r in records)
    # the in-game part went out over about two seconds, not all at once
    assert (stamps[-1] - stamps[0]) / 1000 >= 1.7
