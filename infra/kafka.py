"""Kafka clients built from settings: one place that knows producer and consumer options, and
how a client is started and stopped (`started`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from infra.settings import Settings


def make_producer(settings: Settings, **overrides) -> AIOKafkaProducer:
    """acks=all, batched (linger), idempotent only where the broker supports it."""
    options = dict(
        bootstrap_servers=settings.require_bootstrap(),
        acks="all",
        linger_ms=5,
        max_batch_size=1 << 20,
        max_request_size=4 << 20,
        enable_idempotence=settings.kafka_idempotence,
        request_timeout_ms=30_000,
    )
    options.update(overrides)
    return AIOKafkaProducer(**options)


def make_consumer(settings: Settings, *topics: str, **overrides) -> AIOKafkaConsumer:
    """A consumer that reads from the start and never commits on its own."""
    options = dict(
        bootstrap_servers=settings.require_bootstrap(),
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        max_partition_fetch_bytes=8 << 20,
        fetch_max_bytes=32 << 20,
    )
    options.update(overrides)
    return AIOKafkaConsumer(*topics, **options)


Client = TypeVar("Client")


@asynccontextmanager
async def started(client: Client) -> AsyncIterator[Client]:
    """`client` (an aiokafka producer, consumer or admin client, or a wrapper with `start` and
    `stop`) started, and stopped however the block ends. The start is inside: a start that
    raises (a broker down) or is cancelled (a caller's timeout at a broker that does not
    answer) leaves connections and tasks behind too, and the process would log "Unclosed
    AIOKafka..." or keep running on them instead of exiting."""
    stop: Any = getattr(client, "stop", None) or client.close  # (the admin client closes)
    try:
        await client.start()
        yield client
    finally:
        await stop()
