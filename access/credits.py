"""Credit usage in Postgres: durable at commit, so a restart loses no metering.

A charge is one statement: an upsert that adds the price (or a lease's block) only while the
sum stays within the allowance, returning the new total. Row locks serialise concurrent
calls of one subject, so the allowance is never overrun; the rate limit (at most 50 calls/s per
account on the largest plan) keeps that contention low. The price is reserved before the handler
runs and given back if the response is not 2xx, because only 2xx responses are charged.

API processes charge calls against leases (`access.leases`, blocks taken with `take`),
so most calls run no statement here at all. A caller whose revocation this process cannot hear
about (its notification listener is down) passes its `key_id`: the statement then charges only
while the key is unrevoked (`KeyRevoked`).

Key-less callers' rows (subject `addr:…`, one per address and day) bill nobody and would grow
with every address ever seen: each process deletes those untouched for `ADDRESS_DAYS` at most
once an hour, off the request path. Account rows are billing history and are kept.
"""

from __future__ import annotations

import asyncio
import logging
import time

import asyncpg

log = logging.getLogger("access.credits")
ADDRESS_DAYS = 2  # a day's window, plus a day for callers whose day began elsewhere
PRUNE_EVERY_SECONDS = 3600.0
_PRUNE = "DELETE FROM access.usage WHERE subject LIKE 'addr:%' AND updated_at < now() - make_interval(days => $1)"

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
_LIVE_KEY = "EXISTS (SELECT 1 FROM access.api_keys WHERE id = $6 AND revoked_at IS NULL)"
_CHARGE_KEYED = f"""
INSERT INTO access.usage AS u (subject, mode, period, used) SELECT $1, $2, $3, $4 WHERE {_LIVE_KEY}
ON CONFLICT (subject, mode, period) DO UPDATE SET used = u.used + EXCLUDED.used, updated_at = now()
    WHERE u.used + EXCLUDED.used <= $5
RETURNING used
"""
_USED_KEYED = f"""
SELECT (SELECT used FROM access.usage WHERE subject = $1 AND mode = $2 AND period = $3),
       {_LIVE_KEY.replace("$6", "$4")}
"""


class KeyRevoked(Exception):
    """The key was revoked since it was cached."""


class CreditMeter:
    def __init__(self, pool: asyncpg.Pool, clock=time.monotonic) -> None:
        self._pool = pool
        self._clock = clock
        self._next_prune = clock()  # the first charge prunes what earlier runs left
        self._pruning: asyncio.Task | None = None

    async def prune_addresses(self) -> int:
        """Delete key-less usage rows untouched for `ADDRESS_DAYS`; the number deleted."""
        async with self._pool.acquire() as conn:
            status = await conn.execute(_PRUNE, ADDRESS_DAYS)
        return int(status.rsplit(" ", 1)[1])

    def _maybe_prune(self) -> None:
        now = self._clock()
        if now < self._next_prune or (self._pruning is not None and not self._pruning.done()):
            return
        self._next_prune = now + PRUNE_EVERY_SECONDS

        async def prune() -> None:
            try:
                deleted = await self.prune_addresses()
                if deleted:
                    log.info("pruned %d key-less usage rows older than %d days", deleted, ADDRESS_DAYS)
            except Exception as exc:  # tried again within the hour; metering is unaffected
                log.warning("key-less usage rows not pruned: %r", exc)

        self._pruning = asyncio.get_running_loop().create_task(prune())

    async def charge(
        self, subject: str, mode: str, period: str, price: int, allowance: int, key_id: str | None = None,
    ) -> tuple[bool, int]:
        """Add `price` if it fits the allowance: (charged, used after this call). With `key_id`,
        only while that key is unrevoked (else `KeyRevoked`)."""
        self._maybe_prune()
        if price > allowance:
            return False, await self.used(subject, mode, period, key_id)
        async with self._pool.acquire() as conn:
            if key_id is None:
                used = await conn.fetchval(_CHARGE, subject, mode, period, price, allowance)
            else:
                used = await conn.fetchval(_CHARGE_KEYED, subject, mode, period, price, allowance, key_id)
            if used is not None:
                return True, used
            return False, await self._used(conn, subject, mode, period, key_id)

    async def take(
        self, subject: str, mode: str, period: str, need: int, want: int, allowance: int, key_id: str | None = None,
    ) -> tuple[int, int]:
        """A block for a lease (`access.leases`): `want` credits, or as many as are left when
        fewer, but at least `need`: (credits granted, used after the grant); 0 granted when
        not even `need` fits. Each attempt is the capped statement of `charge`, so concurrent
        grants of every process together never pass the allowance."""
        want = max(want, need)
        for _ in range(3):  # another process may take what was left between two attempts
            charged, used = await self.charge(subject, mode, period, want, allowance, key_id)
            if charged:
                return want, used
            room = allowance - used
            if room < need:
                return 0, used
            want = max(need, min(want, room))
        return 0, used

    async def refund(self, subject: str, mode: str, period: str, price: int) -> int:
        async with self._pool.acquire() as conn:
            return (await conn.fetchval(_REFUND, subject, mode, period, price)) or 0

    async def used(self, subject: str, mode: str, period: str, key_id: str | None = None) -> int:
        async with self._pool.acquire() as conn:
            return await self._used(conn, subject, mode, period, key_id)

    @staticmethod
    async def _used(conn: asyncpg.Connection, subject: str, mode: str, period: str, key_id: str | None) -> int:
        if key_id is None:
            return (await conn.fetchval(_USED, subject, mode, period)) or 0
        used, live = await conn.fetchrow(_USED_KEYED, subject, mode, period, key_id)
        if not live:
            raise KeyRevoked(key_id)
        return used or 0
