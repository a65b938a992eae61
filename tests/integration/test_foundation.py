"""The foundation against real parts: migrations, topic admin, log epoch."""

from __future__ import annotations

import asyncio
import secrets

import asyncpg
import msgspec
from aiokafka.admin import AIOKafkaAdminClient

from infra.log_epoch import ensure_epoch, read_epoch
from infra.migrate import is_migrated, migrate
from infra.topics import ensure_topics
from schemas.datasets import DATASETS
from tests.conftest import with_database


async def test_migrations_are_applied_once_and_recorded(database_url):
    conn = await asyncpg.connect(database_url)
    try:
        assert await is_migrated(conn)
        assert await migrate(conn) == []  # nothing pending: a second start changes nothing
        for schema in DATASETS:
            tables = {
                r["table_name"]
                for r in await conn.fetch(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = $1", schema
                )
            }
            assert {"games", "markets", "market_lines", "players", "tracking", "outbox"} <= tables
        scopes = {r["scope"] for r in await conn.fetch("SELECT scope FROM schema_migrations")}
        assert scopes == {"global", *DATASETS}
    finally:
        await conn.close()


async def test_is_migrated_tells_empty_partly_and_fully_migrated_databases(pg_server):
    name = f"probe_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(pg_server)
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        conn = await asyncpg.connect(with_database(pg_server, name))
        try:
            assert await is_migrated(conn) is False  # no schema_migrations table at all
            assert await migrate(conn)
            assert await is_migrated(conn) is True
            await conn.execute("DELETE FROM schema_migrations WHERE ctid = (SELECT min(ctid) FROM schema_migrations)")
            assert await is_migrated(conn) is False  # one file not recorded
        finally:
            await conn.close()
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


async def test_topics_created_with_planned_partitions(settings):
    # feed topics and wire.deltas each follow their own setting
    settings = msgspec.structs.replace(settings, topic_partitions=3, delta_partitions=2)
    topics = await ensure_topics(settings)
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap)
    await admin.start()
    try:
        described = await admin.describe_topics(list(topics))
    finally:
        await admin.close()
    counts = {d["topic"]: len(d["partitions"]) for d in described}
    assert counts == topics
    ns = settings.topic_namespace
    assert counts[f"{ns}feed.games"] == counts[f"{ns}test.feed.players"] == 3
    assert counts[f"{ns}wire.deltas"] == counts[f"{ns}test.wire.deltas"] == 2
    assert counts[f"{ns}svc.control"] == counts[f"{ns}feed.deadletter"] == 1


async def test_epoch_is_written_once_and_first_writer_wins(settings, topics):
    assert await read_epoch(settings, "live") is None
    first, second = await asyncio.gather(ensure_epoch(settings, "live"), ensure_epoch(settings, "live"))
    assert first == second
    assert await ensure_epoch(settings, "live") == first
    # the sandbox has a log of its own, with its own epoch
    assert await ensure_epoch(settings, "test") != first
