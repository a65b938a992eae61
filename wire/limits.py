"""Open Wire connections per address and per account, counted in Postgres so every
API process sees the same numbers. Each row names the process that holds it (`wire.presence`):
rows of a process that died stop counting as soon as Postgres notices its connection is gone
(at once for a killed process). A connection also refreshes its row with each ping; a row not
refreshed for `stale_seconds` (a close never counted out) no longer counts either.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from datetime import datetime, timedelta, timezone

import asyncpg

from wire.presence import alive

log = logging.getLogger("wire.limits")
PER_ADDRESS = 5  # open connections per address, whatever the plan
SEEN_BATCH_SECONDS = 1.0  # refreshes asked for within this are written in one statement


class OpenConnections:
    def __init__(self, pool: asyncpg.Pool, stale_seconds: float) -> None:
        self._pool = pool
        self._stale = timedelta(seconds=stale_seconds)
        self._seen: set[str] = set()  # refreshes asked for, not written yet
        self._writing: asyncio.Task | None = None

    async def open(self, address: str, account: str, account_limit: int, process: int | None = None,
                   now: datetime | None = None) -> tuple[str | None, str | None]:
        """(connection ID, None) when counted in; (None, the limit it would break) otherwise.
        Advisory locks on the address, then the account, make check-and-insert atomic."""
        now = now or datetime.now(timezone.utc)
        fresh = now - self._stale
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext('wire-address:' || $1))", address)
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext('wire-account:' || $1))", account)
            await conn.execute(
                "DELETE FROM access.wire_connections c WHERE (c.address = $2 OR c.account_id = $3) "
                f"AND (c.seen_at < $1 OR (c.process IS NOT NULL AND NOT {alive('c.process')}))",
                fresh, address, account,
            )
            by_address, by_account = await conn.fetchrow(
                "SELECT count(*) FILTER (WHERE address = $1), count(*) FILTER (WHERE account_id = $2) "
                "FROM access.wire_connections WHERE address = $1 OR account_id = $2", address, account,
            )
            if by_address >= PER_ADDRESS:
                return None, f"at most {PER_ADDRESS} open connections per address"
            if by_account >= account_limit:
                return None, f"at most {account_limit} open connections for this plan"
            connection_id = secrets.token_hex(12)
            await conn.execute("INSERT INTO access.wire_connections (id, address, account_id, seen_at, process) "
                               "VALUES ($1, $2, $3, $4, $5)", connection_id, address, account, now, process)
        return connection_id, None

    def seen_soon(self, connection_id: str) -> None:
        """Refresh a connection's row within SEEN_BATCH_SECONDS: one statement for all the
        connections of this process that pinged meanwhile (2,000 sockets pinging every 20 s were
        100 round trips a second, each its own; a second's delay is nothing against the stale
        limit of three pings)."""
        self._seen.add(connection_id)
        if self._writing is None:
            self._writing = asyncio.get_running_loop().create_task(self._write_seen(), name="wire-seen")

    async def _write_seen(self) -> None:
        try:
            await asyncio.sleep(SEEN_BATCH_SECONDS)
        finally:
            ids, self._seen, self._writing = list(self._seen), set(), None
        try:
            async with self._pool.acquire() as conn:
                await conn.execute("UPDATE access.wire_connections SET seen_at = now() WHERE id = ANY($1::text[])", ids)
        except Exception as exc:  # the next pings ask again; three missed would count the rows out
            log.warning("wire connections not refreshed: %r", exc)

    async def close(self, connection_id: str) -> None:
        async with self._pool.acquire() as conn:
            await conn.execute("DELETE FROM access.wire_connections WHERE id = $1", connection_id)
