"""One ingest run: a parsed file through resolution, stamping and the log, batch by batch.

Per batch: resolve its claims (registry), build and stamp its events, drop the ones this run
already produced, append the rest (one lookup of what the log holds, gathered sends, one
insert of what the broker acknowledged) together with the batch's dead letters.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from datetime import datetime, timezone

from ingest.batches import RunState, batched, build
from ingest.event_log import EventLog
from ingest.records import Parsed, Rejected
from ingest.summary import Summary
from schemas.deadletter import DeadLetter

Progress = Callable[[Summary], None]


def dead_letter(parsed: Parsed, r: Rejected, ingest_ts: datetime) -> DeadLetter:
    return DeadLetter(source=parsed.source, file=parsed.file, location=r.location, reason=r.reason, raw=r.raw,
                      ingest_ts=ingest_ts)


def reason_kind(reason: str) -> str:
    """A reason with its particulars folded, to count dead letters by kind."""
    folded = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", reason)
    folded = re.sub(r"\([^)]*\)", "(…)", folded)
    return re.sub(r"[-+]?\d+(?:\.\d+)?", "N", folded)


async def ingest(parsed: Parsed, log: EventLog, progress: Progress | None = None) -> Summary:
    started = time.perf_counter()
    ingest_ts = datetime.now(timezone.utc)
    summary = Summary()
    state = RunState()
    for batch in batched(parsed.items):
        resolution = await log.resolver.resolve(batch.records)
        events, rejected = build(batch, resolution, state)
        dead = [dead_letter(parsed, r, ingest_ts) for r in rejected]
        accepted, duplicate = await log.append(events, dead)
        summary.records = len(state.records)
        summary.dead_lettered += len(dead)
        summary.events += len(events)
        summary.accepted += accepted
        summary.duplicate += duplicate
        summary.by_type.update(type(e).__name__ for e in events)
        summary.reasons.update(reason_kind(r.reason) for r in rejected)
        if progress:
            progress(summary)
    summary.seconds = time.perf_counter() - started
    summary.events_per_second = round(summary.events / summary.seconds, 1) if summary.seconds else 0.0
    return summary
