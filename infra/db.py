"""asyncpg connections: JSON columns decoded with msgspec, and a start-up wait."""

from __future__ import annotations

import asyncio
import time

import asyncpg
import msgspec

_json_encoder = msgspec.json.Encoder(decimal_format="string")


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
        except (OSError, asyncpg.PostgresError, asyncio.TimeoutError) as exc:
            last = exc
            await asyncio.sleep(0.1)
    raise TimeoutError(f"database did not answer within {timeout}s: {last}")
