"""The foundation against real parts: migrations, topic admin, log epoch."""

from __future__ import annotations

import asyncio

import asyncpg
from aiokafka.admin import AIOKafkaAdminClient

from infra.log_epoch import ensure_epoch, read_epoch
from infra.migrate import is_migrated, migrate
from schemas.datasets import DATASETS


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


async def test_unmigrated_database_reports_false(pg_server):
    conn = await asyncpg.connect(pg_server)
    try:
        await conn.execute("CREATE SCHEMA IF NOT EXISTS probe_unmigrated")
        await conn.execute("SET search_path = probe_unmigrated")
        # the server's own database may be migrated by another run; check a clean search path
        assert await conn.fetchval("SELECT to_regclass('probe_unmigrated.schema_migrations')") is None
    finally:
        await conn.execute("DROP SCHEMA IF EXISTS probe_unmigrated")
        await conn.close()


async def test_topics_created_with_planned_partitions(settings, topics):
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap)
    await admin.start()
    try:
        described = await admin.describe_topics(list(topics))
    finally:
        await admin.close()
    counts = {d["topic"]: len(d["partitions"]) for d in described}
    assert counts == topics
    assert counts[f"{settings.topic_namespace}feed.games"] == settings.topic_partitions
    assert counts[f"{settings.topic_namespace}test.feed.games"] == settings.topic_partitions
    assert counts[f"{settings.topic_namespace}svc.control"] == 1


async def test_epoch_is_written_once_and_first_writer_wins(settings, topics):
    assert await read_epoch(settings, "live") is None
    first, second = await asyncio.gather(ensure_epoch(settings, "live"), ensure_epoch(settings, "live"))
    assert first == second
    assert await ensure_epoch(settings, "live") == first
    # the sandbox has a log of its own, with its own epoch
    assert await ensure_epoch(settings, "test") != first
