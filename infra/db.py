"""asyncpg connections: JSON columns decoded with msgspec, a start-up wait, and the one rule
for "the database is down"."""

from __future__ import annotations

import asyncio
import time

import asyncpg
import msgspec

_json_encoder = msgspec.json.Encoder(decimal_format="string")

# What a database that cannot be used right now raises (the one rule: catch it by this tuple): nothing a caller did wrong, so the
# API answers 503 `service_unavailable` (retryable), the Wire backs off, the projector's
# watchdog counts the outage and the CLI says the stack is not running. Anything else a query
# raises is a bug or a refusal, and is left to surface as one.
DATABASE_DOWN: tuple[type[BaseException], ...] = (
    OSError,  # refused, reset, no route to the host
    TimeoutError,  # no answer within the caller's bound (connect, acquire, query)
    asyncpg.InterfaceError,  # the connection or pool closed under us
    # the server ended the connection just as a query started: asyncpg's protocol is caught
    # between the two ("cannot switch to state 11; another operation is in progress"); seen
    # when a backend is terminated under load
    asyncpg.InternalClientError,
    asyncpg.PostgresConnectionError,  # SQLSTATE class 08: the connection failed or was lost
    asyncpg.OperatorInterventionError,  # class 57: starting up, shutting down, crashed, cancelled
    asyncpg.InsufficientResourcesError,  # class 53: too many connections, out of disk or memory
    asyncpg.InvalidAuthorizationSpecificationError,  # class 28: not let in (yet)
    asyncpg.InvalidCatalogNameError,  # 3D000: the database is not there (yet)
    asyncpg.InvalidSchemaNameError,  # 3F000: a dataset's schema is not migrated yet
    asyncpg.UndefinedTableError,  # 42P01: a read model is not migrated yet
)


def _encode(value) -> str:
    return _json_encoder.encode(value).decode()


async def init_connection(conn: asyncpg.Connection) -> None:
    for typ in ("json", "jsonb"):
        await conn.set_type_codec(
            typ, schema="pg_catalog", encoder=_encode, decoder=msgspec.json.decode, format="text"
        )


async def connect(url: str, **kwargs) -> asyncpg.Connection:
    conn = await asyncpg.connect(url, **kwargs)
    await init_connection(conn)
    return conn


async def keep_session(conn: asyncpg.Connection) -> None:
    """Pool `reset` for users that leave no session state behind (no SET, LISTEN, advisory
    locks or cursors outside a transaction): asyncpg has already rolled back any open
    transaction, so the default `RESET ALL`-and-more round trip on every release is skipped."""


async def create_pool(url: str, min_size: int = 1, max_size: int = 10, **kwargs) -> asyncpg.Pool:
    return await asyncpg.create_pool(
        url, min_size=min_size, max_size=max_size, init=init_connection, **kwargs
    )


async def wait_for_database(url: str, timeout: float = 60.0) -> None:
    """Return once the server accepts a query (a fresh server refuses while starting up)."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            conn = await asyncpg.connect(url, timeout=2)
            await conn.execute("SELECT 1")
            await conn.close()
            return
        except DATABASE_DOWN as exc:
            last = exc
            await asyncio.sleep(0.1)
    raise TimeoutError(f"database did not answer within {timeout}s: {last}")
