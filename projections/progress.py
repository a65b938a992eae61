"""Whether the projector is making progress: per dataset, how far behind the log its read
models are and how long since its tracking rows last moved.

Lag alone cannot tell a projector working through a backlog from one that has stopped (stuck
on a database that died under it, say); the time of the last commit can. Behind the log and
not committing for STALL_AFTER seconds is a stall: `svc doctor` fails on it, and the projector
itself exits on it so that its supervisor restarts it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import asyncpg

from infra.settings import Settings
from projections.lag import measure
from schemas.datasets import DATASETS, pg_schema

STALL_AFTER = 30.0


@dataclass
class DatasetProgress:
    dataset: str
    behind: int  # records on the log the read models do not hold yet
    last_commit_s: float | None  # seconds since a tracking row last moved (None: never)
    stalled: bool


def records_behind(tracking: dict, ends: dict) -> int:
    """Records on the log past the tracked offsets. `tracking`: (topic, partition) -> (last
    offset, epoch) as read from the tracking rows; `ends`: (topic, partition) -> log end."""
    return sum(max(end - (tracking.get(tp, (-1, None))[0] + 1), 0) for tp, end in ends.items())


def is_stalled(behind: int, idle_s: float | None) -> bool:
    """Behind the log with nothing committed for STALL_AFTER seconds. A projector that never
    committed (a fresh one) is judged by lag alone elsewhere: there is no clock to read."""
    return behind > 0 and idle_s is not None and idle_s > STALL_AFTER


async def progress(settings: Settings, conn: asyncpg.Connection) -> list[DatasetProgress]:
    rows, _ = await measure(settings, conn)
    result = []
    for dataset in DATASETS:
        behind = sum(max(r.lag, 0) for r in rows if r.dataset == dataset)
        idle = await conn.fetchval(
            f'SELECT extract(epoch FROM clock_timestamp() - max(committed_at))::float8 '
            f'FROM "{pg_schema(dataset)}".tracking'
        )
        result.append(DatasetProgress(dataset, behind, None if idle is None else round(idle, 1),
                                      is_stalled(behind, idle)))
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
