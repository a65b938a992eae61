"""Credit usage in Postgres: durable at commit, so a restart loses no metering.

A charged call costs one statement on the hot path: an upsert that adds the price only while
the sum stays within the allowance, returning the new total. Row locks serialise concurrent
calls of one subject, so the allowance is never overrun; the rate limit (at most 50 calls/s per
account on the largest plan) keeps that contention low. The price is reserved before the handler
runs and given back if the response is not 2xx, because only 2xx responses are charged.
"""

from __future__ import annotations

import asyncpg

_CHARGE = """
INSERT INTO access.usage AS u (subject, mode, period, used) VALUES ($1, $2, $3, $4)
ON CONFLICT (subject, mode, period) DO UPDATE SET used = u.used + EXCLUDED.used, updated_at = now()
    WHERE u.used + EXCLUDED.used <= $5
RETURNING used
"""
_REFUND = """
UPDATE access.usage SET used = GREATEST(used - $4, 0), updated_at = now()
WHERE subject = $1 AND mode = $2 AND period = $3
RETURNING used
"""
_USED = "SELECT used FROM access.usage WHERE subject = $1 AND mode = $2 AND period = $3"


class CreditMeter:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def charge(self, subject: str, mode: str, period: str, price: int, allowance: int) -> tuple[bool, int]:
        """Add `price` if it fits the allowance: (charged, used after this call)."""
        if price > allowance:
            return False, await self.used(subject, mode, period)
        async with self._pool.acquire() as conn:
            used = await conn.fetchval(_CHARGE, subject, mode, period, price, allowance)
            if used is not None:
                return True, used
            return False, (await conn.fetchval(_USED, subject, mode, period)) or 0

    async def refund(self, subject: str, mode: str, period: str, price: int) -> int:
        async with self._pool.acquire() as conn:
            return (await conn.fetchval(_REFUND, subject, mode, period, price)) or 0

    async def used(self, subject: str, mode: str, period: str) -> int:
        async with self._pool.acquire() as conn:
            return (await conn.fetchval(_USED, subject, mode, period)) or 0
