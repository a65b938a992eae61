"""This process's open Wire connections (sockets and streams, by inbox) and the key each serves.

Two things need them all at once:
- an orderly stop (api/orderly_stop.py): each is told `stopping` and the stop waits until all
  have gone;
- a key's standing: when a key is revoked, loses `wire:connect` (its scopes or its account's
  plan changed) or loses a topic's scope, its connections close (or drop that topic) within
  seconds. Postgres announces such changes (`svc_keys`, api/listen.py); each announced key of an
  open connection is read again here. While the listener is not connected (announcements may be
  lost), every open connection's key is read again every `SWEEP_SECONDS`, and once after it
  reconnects.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import structlog

from infra.db import DATABASE_DOWN
from infra.memory import release_after_close, settle_after_open
from wire.fanout import FORBIDDEN, RESCOPED, REVOKED, STOPPING, Inbox
from wire.tickets import key_standing

log = structlog.get_logger("api.wire")
SWEEP_SECONDS = 3.0  # how often keys are read again while announcements may be missed
RECENT_SECONDS = 30.0  # a connection entering this soon after its key was announced reads it again
WIRE_SCOPE = "wire:connect"  # what opening the Wire needs, checked again at every (re)start


class LiveConnections:
    def __init__(self, app_state: Any = None) -> None:
        self._app_state = app_state
        self._inboxes: dict[Inbox, tuple[str | None, frozenset[str]]] = {}  # -> key ID, scopes last known
        self._idle = asyncio.Event()
        self._idle.set()
        self.stopping = False
        self._checks: set[asyncio.Task] = set()
        self._sweeper: asyncio.Task | None = None
        self._announced: dict[str, float] = {}  # key ID -> when last announced (monotonic)
        listener = getattr(app_state, "listener", None)
        if listener is not None:
            listener.on_key_revoked.append(self.key_changed)
            listener.on_connected.append(self.all_keys_changed)  # what was announced meanwhile is lost

    def enter(self, inbox: Inbox, key_id: str | None = None, scopes: frozenset[str] = frozenset()) -> None:
        self._inboxes[inbox] = (key_id, scopes)
        self._idle.clear()
        settle_after_open()  # what it holds lives long: out of the collector's way
        if self.stopping:
            inbox.start_over(STOPPING)
        # announced between this connection's ticket check and now: that announcement missed it
        announced = self._announced.get(key_id) if key_id is not None else None
        if announced is not None and time.monotonic() - announced < RECENT_SECONDS:
            self._check({key_id})
        if key_id is not None and self._sweeper is None and getattr(self._app_state, "pool", None) is not None:
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep(), name="wire-key-sweep")

    def rekey(self, inbox: Inbox, key_id: str, scopes: frozenset[str]) -> None:
        """The connection now serves another grant (an in-band `auth`)."""
        if inbox in self._inboxes:
            self._inboxes[inbox] = (key_id, scopes)

    def leave(self, inbox: Inbox) -> None:
        self._inboxes.pop(inbox, None)
        if not self._inboxes:
            self._idle.set()
        release_after_close(len(self._inboxes))  # what the connection held, once its handler is gone

    async def close_all(self) -> None:
        self.stopping = True
        for inbox in list(self._inboxes):
            inbox.start_over(STOPPING)
        await self._idle.wait()

    # ---- key standing ---------------------------------------------------------------------

    def key_changed(self, key_id: str) -> None:
        """A key's standing may have changed (a notification): read it again, in a task."""
        now = time.monotonic()
        self._announced = {k: t for k, t in self._announced.items() if now - t < RECENT_SECONDS}
        self._announced[key_id] = now
        if any(k == key_id for k, _ in self._inboxes.values()):
            self._check({key_id})

    def all_keys_changed(self) -> None:
        keys = {k for k, _ in self._inboxes.values() if k is not None}
        if keys:
            self._check(keys)

    def _check(self, keys: set[str]) -> None:
        task = asyncio.get_running_loop().create_task(self.recheck(keys))
        self._checks.add(task)
        task.add_done_callback(self._checks.discard)

    async def recheck(self, keys: set[str]) -> None:
        """Read these keys' standing and tell their connections: revoked and forbidden close,
        changed scopes drop the topics no longer allowed. A database that does not answer leaves
        things as they are (the sweep tries again)."""
        pool = getattr(self._app_state, "pool", None)
        if pool is None:
            return
        standing: dict[str, frozenset[str] | None] = {}
        try:
            async with asyncio.timeout(5), pool.acquire() as conn:
                for key_id in keys:
                    standing[key_id] = await key_standing(conn, key_id)
        except DATABASE_DOWN as exc:
            log.warning("wire key standing not read", error=repr(exc))
            return
        for inbox, (key_id, scopes) in list(self._inboxes.items()):
            if key_id not in standing:
                continue
            now = standing[key_id]
            if now is None:
                inbox.start_over(REVOKED)
            elif WIRE_SCOPE not in now:
                inbox.start_over(FORBIDDEN)
            elif now != scopes:
                self._inboxes[inbox] = (key_id, now)
                inbox.scopes = now
                inbox.start_over(RESCOPED)

    async def _sweep(self) -> None:
        listener = getattr(self._app_state, "listener", None)
        while True:
            await asyncio.sleep(SWEEP_SECONDS)
            if listener is None or not listener.connected:
                keys = {k for k, _ in self._inboxes.values() if k is not None}
                if keys:
                    await self.recheck(keys)

    async def aclose(self) -> None:
        tasks = [t for t in (self._sweeper, *self._checks) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


def live_connections(app_state: Any) -> LiveConnections:
    live = app_state.extras.get("live_connections")
    if live is None:
        live = app_state.extras["live_connections"] = LiveConnections(app_state)
    return live
