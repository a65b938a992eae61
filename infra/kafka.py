"""Kafka clients built from settings: one place that knows producer and consumer options, and
how a client is started and stopped (`started` for a block, `start_or_stop` for a client kept
across calls)."""

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


# the fetch wait of a consumer waiting for new records from a broker that answers a waiting
# fetch when records arrive (Settings.broker_long_poll): the wait then bounds only how long an
# idle consumer's fetch stays open, not how late a record is seen. Kafka's own default.
LONG_POLL_WAIT_MS = 500


def wait_for_new_ms(settings: Settings, short_ms: int) -> int:
    """The fetch wait for a consumer that waits for new records: `short_ms` (a poll, what a
    broker that answers only when the wait ends needs) unless the broker long-polls."""
    return LONG_POLL_WAIT_MS if settings.broker_long_poll else short_ms


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


async def start_or_stop(client: Client) -> Client:
    """`client` started; when the start raises (a broker down) or is cancelled (a caller's
    timeout at a broker that does not answer) it is stopped before the error goes on, since a
    client whose start failed still holds connections and tasks ("Unclosed AIOKafka..."). For a
    client that outlives the call that starts it (kept for later calls, or reconnected in a
    loop): its owner stops it once started. A client used in one block: `started`."""
    try:
        await client.start()
    except BaseException:
        try:
            await _stopper(client)()
        except Exception:  # the start's error is the one to report
            pass
        raise
    return client


def _stopper(client: Any) -> Any:
    return getattr(client, "stop", None) or client.close  # (the admin client closes)


@asynccontextmanager
async def started(client: Client) -> AsyncIterator[Client]:
    """`client` (an aiokafka producer, consumer or admin client, or a wrapper with `start` and
    `stop`) started, and stopped however the block ends. The start is inside: a start that
    raises (a broker down) or is cancelled (a caller's timeout at a broker that does not
    answer) leaves connections and tasks behind too, and the process would log "Unclosed
    AIOKafka..." or keep running on them instead of exiting."""
    await start_or_stop(client)
    try:
        yield client
    finally:
        await _stopper(client)()
