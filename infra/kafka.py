"""Kafka clients built from settings: one place that knows producer and consumer options."""

from __future__ import annotations

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
