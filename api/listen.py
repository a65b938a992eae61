"""One dedicated Postgres connection per API process LISTENs for what the database announces
(infra/channels.py): revoked keys, and changes to the read models of each dataset.

While it is connected the process may trust its caches (keys, responses) between notifications;
`connected` says so. Whenever it is not (before the first connection, after a lost one, while
reconnecting with backoff), callers fall back to asking the database on every call, so a change
is never missed. On every (re)connection, once LISTEN is in place, everything heard before is
forgotten (`on_connected`, `Changes.missed`), since notifications of the gap are lost.
A ping every `PING_SECONDS` notices a connection that died without saying so.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence

import asyncpg
import structlog

from api.changes import Changes
from infra import channels
from infra.db import DATABASE_DOWN

log = structlog.get_logger("api.listen")

RETRY_FIRST_SECONDS = 0.2
RETRY_MAX_SECONDS = 5.0
PING_SECONDS = 5.0
CONNECT_TIMEOUT_SECONDS = 5.0
APPLICATION_NAME = "svc-api-listen"


class Listener:
    def __init__(self, database_url: str, schemas: Sequence[str]) -> None:
        self._url = database_url
        self._channels = {channels.read_models(s): s for s in schemas}
        self.changes = Changes()
        self.connected = False
        self.on_connected: list[Callable[[], None]] = []  # e.g. drop every cached key
        self.on_key_revoked: list[Callable[[str], None]] = []
        self.connections = 0  # how many times it has connected
        self.backend_pid: int | None = None  # the listening connection's server process
        self._task: asyncio.Task | None = None
        self._up = asyncio.Event()

    async def wait_connected(self, timeout: float) -> bool:
        """Whether it is listening within `timeout` seconds (the app waits briefly at start-up,
        so that it serves from its caches from the first request)."""
        try:
            await asyncio.wait_for(self._up.wait(), timeout)
        except TimeoutError:
            return False
        return True

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="svc-api-listen")

    async def aclose(self) -> None:
        self.connected = False
        self._up.clear()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def _key(self, _conn, _pid, _channel: str, key_id: str) -> None:
        for callback in self.on_key_revoked:
            callback(key_id)

    def _table(self, _conn, _pid, channel: str, table: str) -> None:
        self.changes.changed(self._channels[channel], table)

    async def _run(self) -> None:
        delay = RETRY_FIRST_SECONDS
        while True:
            try:
                await self._listen()
                delay = RETRY_FIRST_SECONDS  # it was up until now: retry soon
                log.warning("notification listener lost its connection; reconnecting", retry_s=delay)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # callers fall back to the database meanwhile
                log.warning("notification listener down; reconnecting", error=repr(exc), retry_s=delay)
            self.connected = False
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_MAX_SECONDS)

    async def _listen(self) -> None:
        conn = await asyncpg.connect(
            self._url, timeout=CONNECT_TIMEOUT_SECONDS, server_settings={"application_name": APPLICATION_NAME},
        )
        lost = asyncio.Event()
        conn.add_termination_listener(lambda _conn: lost.set())
        try:
            await conn.add_listener(channels.KEYS, self._key)
            for channel in self._channels:
                await conn.add_listener(channel, self._table)
            # listening from here on; whatever happened before is unknown
            self.changes.missed()
            for callback in self.on_connected:
                callback()
            self.backend_pid = conn.get_server_pid()
            self.connected = True
            self.connections += 1
            self._up.set()
            while not lost.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(lost.wait(), PING_SECONDS)
                if not lost.is_set():
                    try:
                        await asyncio.wait_for(conn.execute("SELECT 1"), CONNECT_TIMEOUT_SECONDS)
                    except DATABASE_DOWN:
                        return  # gone without saying so
        finally:
            self.connected = False
            self._up.clear()
            conn.terminate()
