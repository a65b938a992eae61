"""The API's notification listener (api/listen.py) in tests: wait for what it is told, or take it
down on purpose to exercise the fallback (asking the database on every call)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import asyncpg

import api.listen

T = TypeVar("T")
NOTIFIED_WITHIN_SECONDS = 2.0  # generous: a notification arrives within milliseconds of commit


async def eventually(fetch: Callable[[], Awaitable[T]], accept: Callable[[T], bool],
                     seconds: float = NOTIFIED_WITHIN_SECONDS) -> T:
    """`fetch()` again until `accept` takes its result; fails after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        result = await fetch()
        if accept(result):
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"not accepted within {seconds} s; last: {result!r}")
        await asyncio.sleep(0.01)


def listener_of(front_door: Any) -> api.listen.Listener:
    """The listener of a served app (`api.app.create_app`'s front door), started by its lifespan."""
    return front_door.app.state.app_state.listener


async def stop_listening(front_door: Any, database_url: str, monkeypatch) -> api.listen.Listener:
    """Kill the listener's connection and keep it from reconnecting for the rest of the test."""
    listener = listener_of(front_door)
    assert await listener.wait_connected(10)
    monkeypatch.setattr(api.listen, "RETRY_FIRST_SECONDS", 3600.0)
    conn = await asyncpg.connect(database_url)
    try:
        assert await conn.fetchval("SELECT pg_terminate_backend($1)", listener.backend_pid)
    finally:
        await conn.close()

    async def state() -> bool:
        return listener.connected

    await eventually(state, lambda connected: not connected, seconds=10)
    return listener
