"""Writing the sandbox day to the `test` log on the sandbox clock (ingest/sandbox/clock.py):
the pre-game part at once, then the in-game part as the clock reaches each event, at N times
real speed (`settings.sandbox_speed`, or `max`: the whole day within a second).

The day is rebuilt from the samples each time (deterministic: the same events and IDs for the
same run), and what the log already holds is skipped. Runs are kept per log
(`ingest.sandbox_runs`): a stopped player resumes its run on that run's clock (what fell due
while it was stopped goes out at once); a finished day is played again as a new run, from its
start, on a clock anchored when that run starts.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import asyncpg
import msgspec

from infra.settings import Settings
from ingest.event_log import EventLog, open_event_log
from ingest.pacing import MAX_BATCH, paced
from ingest.sandbox.clock import SandboxClock, ingame_on, pregame_on, reset_events, run_speed
from ingest.sandbox.day import Day, build_day
from ingest.summary import Summary
from schemas.events import AnyEvent

DATASET = "test"
PREVIEW_SPEED = 1.0  # `svc sample load` before any run: the day as it would happen in real time


def _now(events: list[AnyEvent]) -> list[AnyEvent]:
    """The events as taken in now (`ingest_ts` is not part of an event's ID)."""
    now = datetime.now(timezone.utc)
    return [msgspec.structs.replace(e, ingest_ts=now) for e in events]


class Run(msgspec.Struct):
    run: int
    clock: SandboxClock
    started: bool
    finished: bool


async def latest_run(conn: asyncpg.Connection, log_id: int) -> Run | None:
    row = await conn.fetchrow(
        "SELECT run, anchor, speed, started, finished_at IS NOT NULL AS finished FROM ingest.sandbox_runs "
        "WHERE log_id = $1 ORDER BY run DESC LIMIT 1", log_id,
    )
    if row is None:
        return None
    return Run(row["run"], SandboxClock(row["anchor"], row["speed"]), row["started"], row["finished"])


async def _begin(conn: asyncpg.Connection, log_id: int, run: int, clock: SandboxClock) -> Run:
    """Run `run` on `clock`, not started yet (a run never started is anchored again)."""
    await conn.execute(
        "INSERT INTO ingest.sandbox_runs (log_id, run, anchor, speed) VALUES ($1, $2, $3, $4) "
        "ON CONFLICT (log_id, run) DO UPDATE SET anchor = excluded.anchor, speed = excluded.speed",
        log_id, run, clock.anchor, clock.speed,
    )
    return Run(run, clock, False, False)


async def _append(log: EventLog, events: list[AnyEvent], summary: Summary) -> None:
    for i in range(0, len(events), MAX_BATCH):
        accepted, duplicate = await log.append(_now(events[i:i + MAX_BATCH]))
        summary.accepted += accepted
        summary.duplicate += duplicate


async def _append_pregame(log: EventLog, day: Day, run: Run) -> Summary:
    started = time.perf_counter()
    await log.resolver.register(day.claims)
    events = reset_events(day, run.clock, run.run, datetime.now(timezone.utc)) + pregame_on(day, run.clock)
    summary = Summary(records=len(events), events=len(events))
    await _append(log, events, summary)
    summary.by_type.update(type(e).__name__ for e in events)
    summary.seconds = time.perf_counter() - started
    summary.events_per_second = round(summary.events / summary.seconds, 1) if summary.seconds else 0.0
    return summary


async def load_pregame(settings: Settings, samples: Path) -> Summary:
    """The pre-game part of the latest run; before any run, of a first run anchored now at real
    speed (a player starting it later anchors it again)."""
    now = datetime.now(timezone.utc)
    day = build_day(samples, now)
    async with open_event_log(settings, DATASET) as log:
        run = await latest_run(log.conn, log.appended.log_id)
        if run is None:
            run = await _begin(log.conn, log.appended.log_id, 1, SandboxClock(now, PREVIEW_SPEED))
        return await _append_pregame(log, day, run)


async def play(
    settings: Settings, samples: Path, speed: float | None, progress: Callable[[Summary, datetime], None] | None = None,
) -> Summary:
    """Resume the run under way, or start one (the day from its start) on a clock anchored now;
    its pre-game part first if missing, then its in-game part as the clock reaches each event."""
    started = time.perf_counter()
    day = build_day(samples, datetime.now(timezone.utc))
    async with open_event_log(settings, DATASET) as log:
        log_id = log.appended.log_id
        run = await latest_run(log.conn, log_id)
        if run is None or run.finished or not run.started:
            number = 1 if run is None else run.run + (1 if run.finished else 0)
            clock = SandboxClock(datetime.now(timezone.utc), run_speed(day, speed))  # the day starts now
            run = await _begin(log.conn, log_id, number, clock)
        await _append_pregame(log, day, run)
        ingame = ingame_on(day, run.clock)
        known = await log.appended.known([e.event_id for e in ingame])
        todo = [e for e in ingame if e.event_id not in known]
        summary = Summary(records=len(ingame), events=len(ingame), duplicate=len(ingame) - len(todo))
        summary.by_type.update(type(e).__name__ for e in ingame)
        await log.conn.execute("UPDATE ingest.sandbox_runs SET started = true WHERE log_id = $1 AND run = $2",
                               log_id, run.run)
        # each event goes out when the wall clock reaches its time (what is already due, at once)
        begin = datetime.now(timezone.utc)
        async for part in paced([(e.source_ts - begin).total_seconds() for e in todo], 1.0):
            accepted, duplicate = await log.append(_now(todo[part]))
            summary.accepted += accepted
            summary.duplicate += duplicate
            if progress:
                progress(summary, todo[part.stop - 1].source_ts)
        await log.conn.execute("UPDATE ingest.sandbox_runs SET finished_at = now() WHERE log_id = $1 AND run = $2",
                               log_id, run.run)
    summary.seconds = time.perf_counter() - started
    summary.events_per_second = round(summary.events / summary.seconds, 1) if summary.seconds else 0.0
    return summary
