"""Whether the API process that holds a Wire connection or session is alive, for every process.

Each API process that serves the Wire keeps one dedicated Postgres connection that holds an
advisory lock named by the process's number, and writes a heartbeat (`access.wire_processes`)
every second. Open-connection counts (`wire.limits`) count only rows of processes whose lock is
held: a process killed outright (SIGKILL, OOM) loses its connection, so Postgres releases the lock
at once and its connections stop counting within moments, not minutes. A session held by a
connection of a dead process is resumable for 120 s from that process's last heartbeat,
which is at most a second before it died (`wire.sessions`).

A process that loses its connection reconnects and takes its lock again; meanwhile its own rows
do not count (its clients are under-counted, never refused for it) and its sessions stay
resumable on their heartbeat.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets

import asyncpg

log = logging.getLogger("wire.presence")
LOCK_SPACE = 0x5357  # the first key of the two-key advisory locks that mark live processes
HEARTBEAT_SECONDS = 1.0
CONNECT_TIMEOUT_SECONDS = 5.0
RETRY_SECONDS = 0.5
KEEP_DEAD = "1 day"  # rows of processes gone this long are deleted


def alive(column: str) -> str:
    """SQL: whether the process numbered by `column` holds its lock (is alive) in this database."""
    return (f"EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.classid = {LOCK_SPACE} "
            f"AND l.objid = ({column})::oid AND l.objsubid = 2 AND l.granted "
            f"AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))")


def new_number() -> int:
    return 1 + secrets.randbelow(2**31 - 2)  # positive: it is compared as an oid


class Presence:
    def __init__(self, database_url: str) -> None:
        self._url = database_url
        self.number = new_number()
        self._ready = asyncio.Event()
        self._task: asyncio.Task | None = None

    @property
    def ready(self) -> bool:
        return self._ready.is_set()

    async def start(self, timeout: float) -> bool:
        """Start (once) and wait until the lock is held; False when not within `timeout`."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run(), name="wire-presence")
        try:
            await asyncio.wait_for(self._ready.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def _run(self) -> None:
        while True:
            try:
                await self._hold()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # reconnect; rows of this process do not count meanwhile
                log.warning("wire presence lost its connection (%r); reconnecting", exc)
            self._ready.clear()
            await asyncio.sleep(RETRY_SECONDS)

    async def _hold(self) -> None:
        conn = await asyncpg.connect(self._url, timeout=CONNECT_TIMEOUT_SECONDS,
                                     server_settings={"application_name": "svc-api-presence"})
        try:
            while not await conn.fetchval("SELECT pg_try_advisory_lock($1, $2)", LOCK_SPACE, self.number):
                self.number = new_number()  # taken (by chance, or by a stale copy of this one): another
            await conn.execute(
                "INSERT INTO access.wire_processes (id, seen_at) VALUES ($1, now()) "
                "ON CONFLICT (id) DO UPDATE SET seen_at = now()", self.number,
            )
            await conn.execute(f"DELETE FROM access.wire_processes WHERE seen_at < now() - interval '{KEEP_DEAD}'")
            self._ready.set()
            while True:
                await asyncio.sleep(HEARTBEAT_SECONDS)
                await asyncio.wait_for(
                    conn.execute("UPDATE access.wire_processes SET seen_at = now() WHERE id = $1", self.number),
                    CONNECT_TIMEOUT_SECONDS,
                )
        finally:
            self._ready.clear()
            conn.terminate()

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None
