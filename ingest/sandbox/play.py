"""Writing the sandbox day to the `test` log: the pre-game part at once, then the in-game
part in time order at N times real speed (`settings.sandbox_speed`, or as fast as possible).

The day is rebuilt from the samples each time (deterministic: the same events and IDs), and
what the log already holds is skipped, so a restarted player resumes where it stopped and a
finished day appends nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import msgspec

from infra.settings import Settings
from ingest.event_log import EventLog, open_event_log
from ingest.pacing import MAX_BATCH, offsets, paced
from ingest.sandbox.day import Day, build_day
from ingest.summary import Summary
from schemas.events import AnyEvent

DATASET = "test"


def _now(events: list[AnyEvent]) -> list[AnyEvent]:
    """The events as taken in now (`ingest_ts` is not part of an event's ID)."""
    now = datetime.now(timezone.utc)
    return [msgspec.structs.replace(e, ingest_ts=now) for e in events]


async def _append_pregame(log: EventLog, day: Day) -> Summary:
    started = time.perf_counter()
    await log.resolver.register(day.claims)
    summary = Summary(records=len(day.pregame), events=len(day.pregame))
    for i in range(0, len(day.pregame), MAX_BATCH):
        accepted, duplicate = await log.append(_now(day.pregame[i:i + MAX_BATCH]))
        summary.accepted += accepted
        summary.duplicate += duplicate
    summary.by_type.update(type(e).__name__ for e in day.pregame)
    summary.seconds = time.perf_counter() - started
    summary.events_per_second = round(summary.events / summary.seconds, 1) if summary.seconds else 0.0
    return summary


async def load_pregame(settings: Settings, samples: Path) -> Summary:
    day = build_day(samples, datetime.now(timezone.utc))
    async with open_event_log(settings, DATASET) as log:
        return await _append_pregame(log, day)


async def play(
    settings: Settings, samples: Path, speed: float | None, progress: Callable[[Summary, datetime], None] | None = None,
) -> Summary:
    """Write the pre-game part if missing, then play what the log lacks of the in-game part."""
    started = time.perf_counter()
    day = build_day(samples, datetime.now(timezone.utc))
    async with open_event_log(settings, DATASET) as log:
        await _append_pregame(log, day)
        known = await log.appended.known([e.event_id for e in day.ingame])
        todo = [e for e in day.ingame if e.event_id not in known]
        summary = Summary(records=len(day.ingame), events=len(day.ingame), duplicate=len(day.ingame) - len(todo))
        summary.by_type.update(type(e).__name__ for e in day.ingame)
        async for part in paced(offsets([e.source_ts for e in todo]), speed):
            accepted, duplicate = await log.append(_now(todo[part]))
            summary.accepted += accepted
            summary.duplicate += duplicate
            if progress:
                progress(summary, todo[part.stop - 1].source_ts)
    summary.seconds = time.perf_counter() - started
    summary.events_per_second = round(summary.events / summary.seconds, 1) if summary.seconds else 0.0
    return summary
