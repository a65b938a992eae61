"""Rate windows: a sliding log, and what a caller is told about it. Pure.

Algorithm: each admitted call is logged with its time; a call at time `now` is admitted only
while fewer than `limit` logged calls lie in (now - window, now]. So any span of `window`
seconds, wherever it starts, holds at most `limit` admitted calls: never more, unlike fixed
windows (up to 2x across a boundary) or approximate sliding counters. Refused calls are not
logged. Memory is at most `limit` timestamps per subject; the Redis backend keeps the same log in
a sorted set and runs the same steps in one Lua script, so several API processes share it.

After an admitted call the earliest moment one more call is admitted is when the oldest logged
call leaves the window: that is `reset` (`t` in RateLimit, X-RateLimit-Reset, Retry-After).
"""

from __future__ import annotations

import math
from collections import deque

import msgspec

# frozen msgspec Structs rather than frozen dataclasses: every metered call makes two of these,
# and a frozen dataclass's __init__ costs ten times as much


class RatePolicy(msgspec.Struct, frozen=True):
    name: str  # policy name in RateLimit-Policy: the plan
    limit: int
    window: int  # seconds


class LogReading(msgspec.Struct, frozen=True):
    """What the log said right after trying to admit one call."""

    allowed: bool
    count: int  # logged calls in the window, this one included when admitted
    oldest: float  # time of the oldest logged call (Unix seconds); `now` when the log is empty
    now: float


class RateState(msgspec.Struct, frozen=True):
    """The window a call counted against (`rate`)."""

    policy: RatePolicy
    resource: str  # operation name (anonymous) or `all`
    allowed: bool
    remaining: int
    reset_after: int  # seconds until one more call is admitted
    reset_at: int  # the same moment, Unix seconds


def admit(log: deque[float], now: float, limit: int, window: float) -> LogReading:
    """One admission attempt against an in-memory log (the Lua script does the same)."""
    horizon = now - window
    while log and log[0] <= horizon:
        log.popleft()
    allowed = len(log) < limit
    if allowed:
        log.append(now)
    return LogReading(allowed=allowed, count=len(log), oldest=log[0] if log else now, now=now)


def rate_state(policy: RatePolicy, resource: str, reading: LogReading) -> RateState:
    frees_at = reading.oldest + policy.window
    return RateState(
        policy=policy,
        resource=resource,
        allowed=reading.allowed,
        remaining=max(0, policy.limit - reading.count),
        reset_after=max(0, math.ceil(frees_at - reading.now)),
        reset_at=math.ceil(frees_at),
    )
