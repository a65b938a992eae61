"""Whether the projector is making progress: per dataset, how far behind the log its read
models are, and for how long they have been behind without moving.

Lag alone cannot tell a projector working through a backlog from one that has stopped (stuck
on a database that died under it, say). Time since the last commit alone cannot tell a stopped
projector from one that was idle through a quiet spell and has just been handed new input:
it has nothing to commit until then. So a dataset is stuck for as long as both have held: no
commit, and the oldest record it has not applied waiting on the log (`stuck_for`). Stuck for
longer than the limit (`Settings.stall_after_seconds`, 30 s) is a stall: `svc doctor` fails on
it, and the projector itself exits on it so that its supervisor restarts it.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

import asyncpg

from infra.settings import Settings
from projections.lag import measure
from projections.log_ends import record_times
from schemas.datasets import DATASETS, pg_schema


@dataclass
class DatasetProgress:
    dataset: str
    behind: int  # records on the log the read models do not hold yet
    last_commit_s: float | None  # seconds since a tracking row last moved (None: never)
    waiting_s: float | None  # seconds the oldest record not applied yet has been on the log (None: none)
    stalled: bool


def records_behind(tracking: dict, ends: dict) -> int:
    """Records on the log past the tracked offsets. `tracking`: (topic, partition) -> (last
    offset, epoch) as read from the tracking rows; `ends`: (topic, partition) -> log end."""
    return sum(max(end - (tracking.get(tp, (-1, None))[0] + 1), 0) for tp, end in ends.items())


def stuck_for(idle_s: float | None, waiting_s: float | None) -> float | None:
    """How long a dataset has been behind without progress: since its last commit or since the
    oldest record it has not applied reached the log, whichever came later. (Each alone is
    wrong: the commit's age grows through a quiet spell with nothing to commit, the record's
    while a backlog of old records is worked through.) None: no clock to read, a projector that
    never committed or a record whose time is unknown, judged by lag alone elsewhere."""
    if idle_s is None:
        return None
    return idle_s if waiting_s is None else min(idle_s, waiting_s)


def is_stalled(behind: int, stuck_s: float | None, limit: float) -> bool:
    """Behind the log and stuck (`stuck_for`) for longer than `limit` seconds."""
    return behind > 0 and stuck_s is not None and stuck_s > limit


async def progress(settings: Settings, conn: asyncpg.Connection) -> list[DatasetProgress]:
    rows, _ = await measure(settings, conn)
    # the oldest record each partition has not applied: the one at its applied count
    arrived = await record_times(settings, {(r.topic, r.partition): r.applied for r in rows if r.lag > 0})
    now = time.time()
    result = []
    for dataset in DATASETS:
        behind = sum(max(r.lag, 0) for r in rows if r.dataset == dataset)
        idle = await conn.fetchval(
            f'SELECT extract(epoch FROM clock_timestamp() - max(committed_at))::float8 '
            f'FROM "{pg_schema(dataset)}".tracking'
        )
        times = [arrived[(r.topic, r.partition)] for r in rows
                 if r.dataset == dataset and (r.topic, r.partition) in arrived]
        waiting = max(now - min(times), 0.0) if times else None
        result.append(DatasetProgress(
            dataset, behind, None if idle is None else round(idle, 1), None if waiting is None else round(waiting, 1),
            is_stalled(behind, stuck_for(idle, waiting), settings.stall_after_seconds)))
    return result


def report(rows: list[DatasetProgress]) -> dict[str, Any]:
    """The projector's entry in `svc doctor`: the per-dataset figures, and an error naming the
    datasets that are stalled."""
    out: dict[str, Any] = {"datasets": {r.dataset: {k: v for k, v in asdict(r).items() if k != "dataset"}
                                        for r in rows}}
    stalled = [r.dataset for r in rows if r.stalled]
    if stalled:
        out["ok"] = False
        out["error"] = f"behind the log and not committing: {', '.join(stalled)}"
    return out
