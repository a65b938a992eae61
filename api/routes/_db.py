"""A pooled connection to the read models for one request, and the schema of its dataset.

A database that is down, or read models not yet migrated (`infra.db.DATABASE_DOWN`), is 503
`service_unavailable` (retryable), never a 500."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
import structlog
from litestar import Request

from api.conventions import schema_of
from api.problems import ProblemError
from infra.db import DATABASE_DOWN

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
