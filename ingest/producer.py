"""The Kafka side of appending: every event onto its feed topic keyed by its entity, so
per-game (per-player, per-team) order holds; a batch's sends are gathered, never awaited
one at a time. acks=all; idempotence per settings (the embedded broker has none).

Partitions are chosen exactly as the default partitioner chooses them (murmur2 of the key
over the topic's partitions), once per key and topic rather than once per record: a game's
quotes share one key, and hashing is a large part of a send's cost. Records go out in
record batches per partition (aiokafka's batch API), one acknowledgement per batch.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence

from aiokafka.partitioner import DefaultPartitioner
from aiokafka.producer.message_accumulator import BatchBuilder

from infra.kafka import make_producer
from infra.settings import Settings
from schemas.datasets import DEADLETTER, FEED_TOPICS, Dataset, topic_name
from schemas.deadletter import DeadLetter, encode_deadletter
from schemas.events import AnyEvent, encode, event_key, event_topic


class FeedProducer:
    def __init__(self, settings: Settings, dataset: Dataset) -> None:
        self.topics = {base: topic_name(dataset, base, settings.topic_namespace) for base in FEED_TOPICS}
        self.deadletter_topic = topic_name(dataset, DEADLETTER, settings.topic_namespace)
        self._producer = make_producer(settings)
        self._partitioner = DefaultPartitioner()
        self._counts: dict[str, int] = {}
        self._partition: dict[str, dict[bytes, int]] = {}  # topic -> key -> partition

    async def start(self) -> None:
        await self._producer.start()

    async def stop(self) -> None:
        await self._producer.stop()

    async def _partitions(self, topic: str) -> dict[bytes, int]:
        """The key -> partition cache of a topic, emptied if its partition count changed."""
        count = len(await self._producer.partitions_for(topic))
        if self._counts.get(topic) != count:
            self._counts[topic] = count
            self._partition[topic] = {}
        return self._partition[topic]

    def _choose(self, cache: dict[bytes, int], key: bytes, count: int) -> int:
        p = cache.get(key)
        if p is None:
            partitions = list(range(count))
            p = cache[key] = self._partitioner(key, partitions, partitions)
        return p

    async def enqueue(
        self, events: Sequence[AnyEvent], dead_letters: Sequence[DeadLetter] = (), values: Sequence[bytes] | None = None,
    ) -> list[asyncio.Future]:
        """Hand a batch to the producer; returns the futures of the broker's acknowledgements.
        `values`: the events already encoded, in the same order (else encoded here)."""
        if values is None:
            values = [encode(e) for e in events]
        records = ((event_topic(e), event_key(e).encode(), v) for e, v in zip(events, values))
        return await self.enqueue_encoded(records, dead_letters)

    async def enqueue_encoded(
        self, records: Iterable[tuple[str, bytes, bytes]], dead_letters: Sequence[DeadLetter] = (),
    ) -> list[asyncio.Future]:
        """(base topic, key, value) records into one record batch per partition (aiokafka's
        batch API: one future per record batch instead of one per record), in their order, so
        each partition's share keeps the order of the input."""
        producer, topics = self._producer, self.topics
        caches = {base: await self._partitions(name) for base, name in topics.items()}
        counts = {base: self._counts[name] for base, name in topics.items()}
        builders: dict[tuple[str, int], BatchBuilder] = {}
        acks: list[asyncio.Future] = []
        for base, key, value in records:
            target = (topics[base], self._choose(caches[base], key, counts[base]))
            builder = builders.get(target)
            if builder is None:
                builder = builders[target] = producer.create_batch()
            if builder.append(key=key, value=value, timestamp=None) is None:  # full: send it, start another
                acks.append(await producer.send_batch(builder, target[0], partition=target[1]))
                builder = builders[target] = producer.create_batch()
                if builder.append(key=key, value=value, timestamp=None) is None:
                    raise ValueError(f"a record of {len(value)} bytes does not fit a record batch")
        for (topic, partition), builder in builders.items():
            acks.append(await producer.send_batch(builder, topic, partition=partition))
        for d in dead_letters:
            acks.append(await producer.send(self.deadletter_topic, encode_deadletter(d), key=d.file.encode()))
        return acks

    async def send(self, events: Sequence[AnyEvent], dead_letters: Sequence[DeadLetter] = ()) -> None:
        """Send a batch and return once the broker acknowledged every record of it."""
        acks = await self.enqueue(events, dead_letters)
        if acks:
            await asyncio.gather(*acks)

    async def send_raw(self, records: Sequence[tuple[str, bytes, bytes]]) -> None:
        """Already encoded (base topic, key, value) records: replay keeps the bytes it read."""
        acks = await self.enqueue_encoded(records)
        if acks:
            await asyncio.gather(*acks)
