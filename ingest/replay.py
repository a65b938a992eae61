"""`svc replay`: re-append an exported log, keeping each event's bytes (and so its ID) and the
relative timing of the recording (its `ts`) at N times real speed, or as fast as possible.

Records go out in file order keyed by their entity, so per-entity order holds. Events the
target log already holds (same `event_id`, same epoch) are counted as duplicates, not sent.
An event the file holds more than once (a log that received it twice) is one event: sent
at most once and counted once. A line that is not a sound event (not an export line, or an
event outside the bounds of schemas/bounds.py) is a dead letter.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import msgspec

from ingest.event_log import EventLog
from ingest.export import ExportLine
from ingest.pacing import offsets, paced
from ingest.summary import Summary
from schemas.bounds import event_problem
from schemas.deadletter import DeadLetter, make_dead_letter
from schemas.events import decode, event_key, event_topic

SOURCE = "replay"
_line = msgspec.json.Decoder(ExportLine)


class Line(msgspec.Struct, frozen=True):
    ts: datetime
    event_id: str
    topic: str
    key: bytes
    value: bytes


def read_lines(path: Path, ingest_ts: datetime) -> tuple[list[Line], list[DeadLetter], int]:
    """The file's valid lines, dead letters for the others, and how many lines were read."""
    lines: list[Line] = []
    dead: list[DeadLetter] = []
    count = 0
    with path.open("rb") as f:
        for number, raw in enumerate(f, start=1):
            if not raw.strip():
                continue
            count += 1
            try:
                line = _line.decode(raw)
                value = bytes(line.event)
                event = decode(value)
                if not event.event_id:
                    raise ValueError("event has no event_id")
                problem = event_problem(event)
                if problem:
                    raise ValueError(problem)
            except (ValueError, ArithmeticError) as exc:  # msgspec's errors are ValueErrors
                dead.append(make_dead_letter(
                    source=SOURCE, file=path.name, location=f"line {number}", reason=str(exc),
                    raw=raw.decode("utf-8", "surrogateescape").rstrip("\n"), ingest_ts=ingest_ts))
                continue
            ts = line.ts if line.ts.tzinfo else line.ts.replace(tzinfo=timezone.utc)
            lines.append(Line(ts, event.event_id, event_topic(event), event_key(event).encode(), value))
    return lines, dead, count


def distinct_events(lines: list[Line]) -> int:
    return len({line.event_id for line in lines})


async def replay(path: Path, log: EventLog, speed: float | None, progress: Callable[[Summary], None] | None = None) -> Summary:
    started = time.perf_counter()
    lines, dead, count = read_lines(path, datetime.now(timezone.utc))
    summary = Summary(records=count, dead_lettered=len(dead), events=distinct_events(lines))
    if dead:  # through the registry, like ingest's: a second replay does not write them again
        await log.append((), dead)
    seen: set[str] = set()
    async for part in paced(offsets([line.ts for line in lines]), speed):
        batch = lines[part]
        known = await log.appended.known([line.event_id for line in batch])
        new, held = [], 0
        for line in batch:
            if line.event_id in seen:  # a repeat within the file: already counted once
                continue
            seen.add(line.event_id)
            if line.event_id in known:
                held += 1
            else:
                new.append(line)
        await log.send_raw([(line.topic, line.key, line.value) for line in new], [line.event_id for line in new])
        summary.accepted += len(new)
        summary.duplicate += held
        if progress:
            progress(summary)
    summary.seconds = time.perf_counter() - started
    summary.events_per_second = round(summary.events / summary.seconds, 1) if summary.seconds else 0.0
    return summary
