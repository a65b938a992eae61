"""The Kafka side of appending: every event onto its feed topic keyed by its entity, so
per-game (per-player, per-team) order holds; a batch's sends are gathered, never awaited
one at a time. acks=all; idempotence per settings (the embedded broker has none)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

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

    async def start(self) -> None:
        await self._producer.start()

    async def stop(self) -> None:
        await self._producer.stop()

    async def send(self, events: Sequence[AnyEvent], dead_letters: Sequence[DeadLetter] = ()) -> None:
        """Send a batch and return once the broker acknowledged every record of it."""
        send, topics = self._producer.send, self.topics
        acks = []
        for e in events:
            acks.append(await send(topics[event_topic(e)], encode(e), key=event_key(e).encode()))
        for d in dead_letters:
            acks.append(await send(self.deadletter_topic, encode_deadletter(d), key=d.file.encode()))
        if acks:
            await asyncio.gather(*acks)

    async def send_raw(self, records: Sequence[tuple[str, bytes, bytes]]) -> None:
        """Already encoded (base topic, key, value) records: replay keeps the bytes it read."""
        send, topics = self._producer.send, self.topics
        acks = [await send(topics[base], value, key=key) for base, key, value in records]
        if acks:
            await asyncio.gather(*acks)
