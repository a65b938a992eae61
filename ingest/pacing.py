"""Playing items at N times the speed they happened: what replay and the sandbox day share."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from datetime import datetime

MAX_BATCH = 5000


def parse_speed(text: str | float | None) -> float | None:
    """`max` (or None): as fast as possible; else a positive factor over real time."""
    if text is None or (isinstance(text, str) and text.strip().lower() == "max"):
        return None
    value = float(text)
    if not value > 0:
        raise ValueError(f"speed must be a positive number or 'max', not {text!r}")
    return value


def offsets(times: Sequence[datetime]) -> list[float]:
    """Seconds from the first time; an earlier time than one before it goes out with it
    (order is kept, time never runs backwards)."""
    out: list[float] = []
    latest = 0.0
    for t in times:
        latest = max(latest, (t - times[0]).total_seconds())
        out.append(latest)
    return out


async def paced(due: Sequence[float], speed: float | None, max_batch: int = MAX_BATCH) -> AsyncIterator[slice]:
    """Slices of the items due now: item k goes out `due[k] / speed` seconds after the start."""
    n, i = len(due), 0
    started = time.monotonic()
    while i < n:
        if speed is None:
            j = min(n, i + max_batch)
        else:
            elapsed = (time.monotonic() - started) * speed
            if due[i] > elapsed:
                await asyncio.sleep((due[i] - elapsed) / speed)
                continue
            j = i
            while j < n and due[j] <= elapsed and j - i < max_batch:
                j += 1
        yield slice(i, j)
        i = j
