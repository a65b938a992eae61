"""Rate-window stores: Redis (shared by every API process) and in-process (the fallback).

Both run the sliding log of `access.window`; Redis does it in one Lua script, which Redis
executes atomically, against the Redis server's own clock, so processes on hosts with drifting
clocks still agree. When Redis is configured but fails, calls are counted in-process until it
answers again (logged): limits then hold per process instead of across processes.
"""

from __future__ import annotations

import secrets
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import structlog

from access.window import LogReading, RatePolicy, admit

log = structlog.get_logger("api.access")
REDIS_CONNECTIONS = 32  # per API process; calls beyond them queue for a free one
REDIS_WAIT_SECONDS = 2.0  # past this a call is counted in-process, as when Redis is down
REDIS_IO_SECONDS = 1.0  # a Redis that accepts but does not answer holds a call no longer
REDIS_RETRY_SECONDS = 5.0  # after a failure, count in-process this long before asking Redis again


def shared_redis(url: str, connections: int = REDIS_CONNECTIONS, wait: float = REDIS_WAIT_SECONDS,
                 io_timeout: float = REDIS_IO_SECONDS) -> Any:
    """A Redis client whose bursts wait for one of a bounded set of connections.

    redis-py's plain pool refuses the call past its size (100) at once; those calls would then
    be counted in-process, so a burst from one key could pass its shared window. Connecting and
    each reply are bounded too: a hung Redis costs a call `io_timeout`, then it is counted
    in-process like a Redis that is down.
    """
    import redis.asyncio as aioredis

    pool = aioredis.BlockingConnectionPool.from_url(
        url, max_connections=connections, timeout=wait, socket_connect_timeout=io_timeout, socket_timeout=io_timeout,
    )
    return aioredis.Redis.from_pool(pool)


# KEYS[1]: the subject's log (a sorted set of call times in microseconds)
# ARGV: limit, window in microseconds, a unique member suffix
_SLIDING_LOG = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local allowed = 0
if count < limit then
  redis.call('ZADD', KEYS[1], now, now .. ':' .. ARGV[3])
  redis.call('PEXPIRE', KEYS[1], math.ceil(window / 1000))
  count = count + 1
  allowed = 1
end
local oldest = now
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if first[2] then oldest = tonumber(first[2]) end
return {allowed, count, now, oldest}
"""


class MemoryWindows:
    """In-process sliding logs; asyncio runs one hit at a time, so each hit is atomic."""

    def __init__(self, clock: Callable[[], float] = time.time, sweep_every: int = 10_000) -> None:
        self._clock = clock
        self._logs: dict[str, tuple[deque[float], int]] = {}
        self._hits = 0
        self._sweep_every = sweep_every

    async def hit(self, key: str, policy: RatePolicy) -> LogReading:
        now = self._clock()
        self._hits += 1
        if self._hits % self._sweep_every == 0:
            self._sweep(now)
        entry = self._logs.get(key)
        if entry is None:
            entry = self._logs[key] = (deque(), policy.window)
        return admit(entry[0], now, policy.limit, policy.window)

    def _sweep(self, now: float) -> None:
        """Forget subjects whose every logged call has left its window (bounds memory)."""
        for key in [k for k, (q, w) in self._logs.items() if not q or q[-1] <= now - w]:
            del self._logs[key]

    def __len__(self) -> int:
        return len(self._logs)


class RedisWindows:
    def __init__(self, redis: Any, prefix: str) -> None:
        self._script = redis.register_script(_SLIDING_LOG)
        self._prefix = prefix

    async def hit(self, key: str, policy: RatePolicy) -> LogReading:
        allowed, count, now_us, oldest_us = await self._script(
            keys=[self._prefix + key], args=[policy.limit, policy.window * 1_000_000, secrets.token_hex(6)]
        )
        return LogReading(allowed=bool(allowed), count=int(count), oldest=int(oldest_us) / 1e6, now=int(now_us) / 1e6)


class Windows:
    """Redis when configured, else (or while it fails) in-process. After a failure, calls are
    counted in-process for `retry_after` seconds before Redis is asked again, so a Redis that
    hangs costs one call its timeout, not every call."""

    def __init__(self, redis: Any | None, prefix: str, memory: MemoryWindows | None = None,
                 retry_after: float = REDIS_RETRY_SECONDS) -> None:
        self.shared = RedisWindows(redis, prefix) if redis is not None else None
        # what a failing Redis raises; imported only with one configured: redis's package
        # imports its whole client (~0.1 CPU-s), in every API process start, Redis or not
        self._failures: tuple[type[BaseException], ...] = (OSError,)
        if self.shared is not None:
            from redis.exceptions import RedisError

            self._failures = (RedisError, OSError)
        self.memory = memory or MemoryWindows()
        self.retry_after = retry_after
        self._warned_at = 0.0
        self._down_until = 0.0

    async def hit(self, key: str, policy: RatePolicy) -> LogReading:
        if self.shared is not None and time.monotonic() >= self._down_until:
            try:
                return await self.shared.hit(key, policy)
            except self._failures as exc:
                now = time.monotonic()
                self._down_until = now + self.retry_after
                if now - self._warned_at > 30:
                    self._warned_at = now
                    log.warning("redis unavailable: rate windows counted in-process", error=type(exc).__name__)
        return await self.memory.hit(key, policy)
