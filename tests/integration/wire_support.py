"""The Wire end to end for a test: the test's feed published, the projector process caught up,
the served API (granian, pinging every second) reading the test's topics, a key with
`wire:connect` and `read:odds`."""

from __future__ import annotations

from contextlib import asynccontextmanager

import httpx
import msgspec

from api.queries import wire as wire_sql
from infra.db import connect
from wire.snapshots import market_snapshot

from tests.integration.access_support import make_key
from tests.support import projection_events as ev
from tests.support.live_server import api_server
from tests.support.projection_harness import caught_up, start_projector


ALLOWED_ORIGIN = "https://app.example.com"


@asynccontextmanager
async def wire_stack(settings, tmp_path, events, **env_overrides: str):
    """Yields (client of the served API, a free-plan key with wire:connect and read:odds, the API's base URL);
    browsers may open the socket only from ALLOWED_ORIGIN. `env_overrides`: the API's environment
    beyond that (`SVC_WIRE_PING_SECONDS`, send queue bounds)."""
    await ev.publish(settings, events)
    projector = start_projector(settings, tmp_path / "projector.log")
    try:
        assert await caught_up(settings, 120)
        key = await make_key(settings, "acme", "free", {"wire:connect", "read:odds"})
        env = {"KAFKA_BOOTSTRAP": settings.kafka_bootstrap, "SVC_TOPIC_NAMESPACE": settings.topic_namespace,
               "SVC_WIRE_PING_SECONDS": "1", "SVC_WIRE_ORIGINS": ALLOWED_ORIGIN, **env_overrides}
        with api_server(settings.database_url, settings.data_dir, settings.key_secret, tmp_path / "api.log", **env) as base:
            async with httpx.AsyncClient(base_url=base, timeout=30) as client:
                yield client, key, base
    finally:
        projector.terminate()
        projector.wait(30)


async def market_now(settings, market_id: str) -> tuple[int, dict]:
    """A market's last seq and its snapshot data (JSON-shaped) in the live read models."""
    conn = await connect(settings.database_url)
    try:
        row, lines = await wire_sql.market_rows(conn, "live", market_id)
        return row["last_seq"], msgspec.json.decode(msgspec.json.encode(market_snapshot(row, lines)))
    finally:
        await conn.close()


async def all_counted_out(settings, timeout: float = 15) -> None:
    """Wait until no connection counts any more: each closed one counted out (the server notices a
    client that went away at its next write, within a ping, and deletes its row), or its row
    stale (its process stopped: 3 pings + 5 s)."""
    import asyncio
    import time

    conn = await connect(settings.database_url)
    try:
        deadline = time.monotonic() + timeout
        while await conn.fetchval(
            "SELECT count(*) FROM access.wire_connections WHERE seen_at > now() - interval '6.5 seconds'"
        ):
            assert time.monotonic() < deadline, "closed Wire connections were never counted out"
            await asyncio.sleep(0.1)
    finally:
        await conn.close()
