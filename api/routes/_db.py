"""A pooled connection to the read models for one request, and the schema of its dataset.

A database that is down, or read models not yet migrated (`infra.db.DATABASE_DOWN`), is 503
`service_unavailable` (retryable), never a 500."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import asyncpg
import structlog
from litestar import Request

from api.conventions import schema_of
from api.problems import ProblemError
from infra.db import DATABASE_DOWN

A = TypeVar("A")
B = TypeVar("B")

log = structlog.get_logger("api.db")
ACQUIRE_TIMEOUT_S = 5.0


def _unavailable() -> ProblemError:
    return ProblemError("service_unavailable", "The read models are not reachable right now; retry shortly.")


@asynccontextmanager
async def read_models(request: Request) -> AsyncIterator[tuple[asyncpg.Connection, str]]:
    pool = request.app.state.app_state.pool
    if pool is None:
        raise _unavailable()
    try:
        async with pool.acquire(timeout=ACQUIRE_TIMEOUT_S) as conn:
            yield conn, schema_of(request)
    except DATABASE_DOWN as exc:
        log.warning("read models unavailable", error=repr(exc), path=request.url.path)
        raise _unavailable() from exc


@asynccontextmanager
async def spare_connection(request: Request) -> AsyncIterator[asyncpg.Connection | None]:
    """A second pooled connection, for a query that can run beside the one on the request's own
    (inside `read_models`, whose handling of a database that is down covers it), or None when none
    is idle now. Never waited for: a request holding one connection and waiting for another is
    how a pool deadlocks (every connection held by a request waiting for a second). The acquire
    takes an idle one without suspending (no timeout: no task between the check and the take)."""
    pool = request.app.state.app_state.pool
    if pool is None or pool.get_idle_size() == 0:
        yield None
        return
    async with pool.acquire() as conn:
        yield conn


async def both(first: Coroutine[Any, Any, A], second: Coroutine[Any, Any, B], *, apart: bool) -> tuple[A, B]:
    """Both results: side by side when `apart` (each on its own connection: `spare_connection`
    gave a second), else one after the other (both on the one connection, which runs a query at
    a time). Side by side, one failing cancels the other, which is awaited, and its error is
    raised as it is (not as a group); one after the other, the first failing closes the second
    unstarted."""
    if not apart:
        try:
            a = await first
        except BaseException:
            second.close()
            raise
        return a, await second
    try:
        async with asyncio.TaskGroup() as group:
            a, b = group.create_task(first), group.create_task(second)
    except BaseExceptionGroup as errors:
        raise errors.exceptions[0] from None
    return a.result(), b.result()
