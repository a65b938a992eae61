"""GET /health: always 200 while the process answers."""

from __future__ import annotations

import asyncio

import msgspec
from litestar import Request, get

from api.openapi import problem_responses
from infra.migrate import is_migrated
from infra.version import VERSION


class Health(msgspec.Struct):
    object: str
    ok: bool
    service: str
    version: str
    db: bool | None
    redis: bool | None
    migrated: bool | None


async def _db_state(pool) -> tuple[bool | None, bool | None]:
    if pool is None:
        return None, None
    try:
        async with asyncio.timeout(2):
            async with pool.acquire() as conn:
                return True, await is_migrated(conn)
    except Exception:
        return False, None  # migrations cannot be checked without the database


async def _redis_state(redis) -> bool | None:
    if redis is None:
        return None
    try:
        async with asyncio.timeout(1):
            return bool(await redis.ping())
    except Exception:
        return False


@get(
    "/health",
    summary="Health of this process and what it depends on",
    description="No credential, no credits. `db`/`redis` are null when not configured; `migrated` is null when the database could not be checked.",
    responses=problem_responses(),
    opt={"operation": "health", "scope": None, "price": 0},
    tags=["status"],
)
async def health(request: Request) -> Health:
    state = request.app.state.app_state
    (db, migrated), redis = await asyncio.gather(_db_state(state.pool), _redis_state(state.redis))
    return Health(object="health", ok=True, service="api", version=VERSION, db=db, redis=redis, migrated=migrated)


ROUTES = [health]
