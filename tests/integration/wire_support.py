"""The Wire end to end for a test: the test's feed published, the projector process caught up,
the served API (granian, pinging every two seconds) reading the test's topics, a key with
`wire:connect` and `read:odds`."""

from __future__ import annotations

import asyncio
import json
import time
from contextlib import asynccontextmanager
from datetime import datetime, timezone

import httpx
import msgspec

from api.queries import wire as wire_sql
from infra.db import connect
from infra.kafka import make_producer
from schemas.datasets import WIRE_DELTAS, topic_name
from wire.snapshots import market_snapshot

from tests.integration.access_support import make_key
from tests.support import projection_events as ev
from tests.support.live_server import api_server
from tests.support.projection_harness import caught_up, start_projector


ALLOWED_ORIGIN = "https://app.example.com"
# rounds of real price changes on one game's moneyline (book, [home, away]), for `publish_round`
PRICE_ROUNDS = [[("dk", [-300, 250]), ("fd", [-280, 230])], [("mgm", [-260, 210]), ("dk", [-120, 100])],
                [("fd", [-150, 130]), ("mgm", [-140, 120])], [("dk", [-200, 170]), ("fd", [-190, 160])]]


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
        # pings every 2 s: a client is closed 4100 after about 3 intervals without a pong, and at
        # 1 s a test process starved for 3 s on a loaded box was closed mid-test (test_wire_feed)
        env = {"KAFKA_BOOTSTRAP": settings.kafka_bootstrap, "SVC_TOPIC_NAMESPACE": settings.topic_namespace,
               "SVC_WIRE_PING_SECONDS": "2", "SVC_WIRE_ORIGINS": ALLOWED_ORIGIN, **env_overrides}
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


async def publish_round(settings, game_id: str, round_: int) -> None:
    """PRICE_ROUNDS[round_] quoted on the game, then the projector caught up."""
    await ev.publish(settings, [ev.quote(game_id, book, prices, minute=300 + 10 * round_ + i)
                                for i, (book, prices) in enumerate(PRICE_ROUNDS[round_])])
    assert await caught_up(settings, 60)


async def until(predicate, timeout: float, what: str) -> None:
    """Wait for `predicate()` (what a client has folded so far); fail saying `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.05)


async def flood_deltas(settings, topic: str, first_seq: int, count: int, per_tenth: int, **fields) -> None:
    """`count` market.update deltas of `topic` from `first_seq`, written straight to wire.deltas
    (no projector) `per_tenth` every 0.1 s; `fields` go into each envelope (its `data`, padding)."""
    producer = make_producer(settings)
    await producer.start()
    try:
        for start in range(0, count, per_tenth):
            for seq in range(first_seq + start, first_seq + min(start + per_tenth, count)):
                now = datetime.now(timezone.utc).isoformat()
                envelope = {"op": "delta", "type": "market.update", "topic": topic, "seq": seq,
                            "source_ts": now, "emit_ts": now, "source": "test", **fields}
                await producer.send(topic_name("live", WIRE_DELTAS, settings.topic_namespace),
                                    json.dumps(envelope).encode(), key=topic.encode())
            await producer.flush()
            await asyncio.sleep(0.1)
    finally:
        await producer.stop()
