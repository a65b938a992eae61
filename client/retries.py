"""When to retry and how long to wait (pure: no I/O).

Retried: 429 `rate_limited` and 5xx answers, and requests that never got an answer. Never
retried: `quota_exhausted` and any other 4xx (retrying them unchanged fails again).
The wait is what the server says (`Retry-After`, else the RateLimit header's `t`), else
exponential backoff with full jitter.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping

RETRY_STATUS_5XX = frozenset({500, 502, 503, 504})
_T = re.compile(r"(?:^|;)\s*t=(\d+)")


def should_retry(status: int, code: str | None) -> bool:
    if status == 429:
        return code == "rate_limited"
    return status in RETRY_STATUS_5XX


def server_wait(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asks us to wait, from `Retry-After` (delta-seconds) or the RateLimit
    header (draft-ietf-httpapi-ratelimit-headers: `"plan";r=0;t=12`, the longest `t` at r=0)."""
    retry_after = headers.get("retry-after")
    if retry_after and retry_after.strip().isdigit():
        return float(retry_after.strip())
    limit = headers.get("ratelimit")
    if limit:
        waits = []
        for item in limit.split(","):
            if re.search(r";\s*r=0\b", item):
                m = _T.search(item)
                if m:
                    waits.append(float(m.group(1)))
        if waits:
            return max(waits)
    return None


def backoff(attempt: int, base: float = 0.5, cap: float = 8.0, rng: random.Random | None = None) -> float:
    """Full-jitter exponential backoff for attempt 0, 1, 2, ..."""
    return (rng or random).uniform(0, min(cap, base * 2**attempt))


def wait_before_retry(attempt: int, headers: Mapping[str, str], max_wait: float) -> float | None:
    """Seconds to sleep before retry `attempt`, or None when the server asks for longer than
    `max_wait` (the caller raises rather than sleeping for minutes)."""
    asked = server_wait(headers)
    if asked is not None:
        return asked if asked <= max_wait else None
    return min(backoff(attempt), max_wait)
