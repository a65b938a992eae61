"""The log epoch: a random ID written as the first record of the control topic.

A log can be new while Postgres still holds read models and tracking rows of an old one (an
external Kafka's topics recreated; the embedded stack's kept log reset with `svc log reset`). Whatever was derived
from a log records its epoch; a different epoch means: derived state is stale, rebuild.
The first record wins, so concurrent starters agree.
"""

from __future__ import annotations

import asyncio

from aiokafka import TopicPartition

from infra.kafka import make_consumer, make_producer, started
from infra.settings import Settings
from schemas.datasets import CONTROL, Dataset, topic_name
from domain.ids import random_id

_PREFIX = b"epoch:"


class EpochChanged(Exception):
    """The log a process was writing to is gone: its broker was replaced by one with another
    log (or none yet). What was acknowledged before is safe; the process stops and reports."""

    def __init__(self, dataset: Dataset, epoch: str, now: str | None, why: str = "") -> None:
        self.dataset, self.epoch, self.now = dataset, epoch, now
        found = f"epoch {now}" if now else (why or "no epoch yet")
        super().__init__(
            f"the {dataset} log changed under this run (epoch {epoch} -> {found}): its broker was replaced; "
            "stopped before writing into the new log as if it were the old one. Nothing acknowledged is "
            "lost: run it again to resume (what the new log holds is not sent twice)"
        )


class EpochWatch:
    """One consumer on the control topic, kept for a whole run, so that a writer can confirm
    its log is still the one it started on: before each batch it sends and after each batch
    is acknowledged (before recording it as appended). A restarted embedded broker is a new
    log; a producer would reconnect to it and go on writing, recording the events under the
    old epoch. `confirm()` raises `EpochChanged` instead, and also when the epoch cannot be
    read within `timeout` seconds (the run cannot know which log it is writing to)."""

    def __init__(self, settings: Settings, dataset: Dataset, epoch: str, timeout: float = 10.0) -> None:
        self.dataset, self.epoch, self.timeout = dataset, epoch, timeout
        self._tp = TopicPartition(topic_name(dataset, CONTROL, settings.topic_namespace), 0)
        self._consumer = make_consumer(settings)

    async def start(self) -> None:
        await self._consumer.start()
        self._consumer.assign([self._tp])

    async def stop(self) -> None:
        await self._consumer.stop()

    async def confirm(self) -> None:
        try:
            async with asyncio.timeout(self.timeout):
                now = await self._first()
        except TimeoutError:
            raise EpochChanged(self.dataset, self.epoch, None, f"epoch unreadable for {self.timeout:g} s") from None
        if now != self.epoch:
            raise EpochChanged(self.dataset, self.epoch, now)

    async def _first(self) -> str | None:
        tp, consumer = self._tp, self._consumer
        if (await consumer.end_offsets([tp]))[tp] == 0:
            return None
        consumer.seek(tp, 0)
        while True:
            batch = await consumer.getmany(tp, timeout_ms=500, max_records=1)
            for record in batch.get(tp, []):
                value = record.value or b""
                return value[len(_PREFIX):].decode() if value.startswith(_PREFIX) else None


async def read_epoch(settings: Settings, dataset: Dataset, timeout: float = 10.0) -> str | None:
    """The epoch of the dataset's log, or None when none was written yet."""
    tp = TopicPartition(topic_name(dataset, CONTROL, settings.topic_namespace), 0)
    async with started(make_consumer(settings)) as consumer:
        consumer.assign([tp])
        end = (await consumer.end_offsets([tp]))[tp]
        if end == 0:
            return None
        consumer.seek(tp, 0)
        deadline = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < deadline:
            batch = await consumer.getmany(tp, timeout_ms=500, max_records=1)
            for record in batch.get(tp, []):
                if record.value and record.value.startswith(_PREFIX):
                    return record.value[len(_PREFIX):].decode()
                return None
        raise TimeoutError("control topic has records but none could be read")


async def ensure_epoch(settings: Settings, dataset: Dataset) -> str:
    """The dataset's epoch, writing a new one first when the log has none."""
    epoch = await read_epoch(settings, dataset)
    if epoch is not None:
        return epoch
    async with started(make_producer(settings)) as producer:
        await producer.send_and_wait(
            topic_name(dataset, CONTROL, settings.topic_namespace),
            _PREFIX + random_id("event").removeprefix("evt_").encode(),
            key=b"epoch",
            partition=0,
        )
    epoch = await read_epoch(settings, dataset)
    assert epoch is not None
    return epoch
