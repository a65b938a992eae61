"""The live path on the real broker (projections/faust_app.py with projections/live_batches.py):
while a batch is being written, faust's agent goes on taking records, and the next batch holds
everything taken meanwhile, not one take's worth. (Before, the agent wrote each batch itself and
faust's `take_events` buffers nothing while its batch is held: a projector behind the log wrote
batches of a few dozen records, one transaction each, and never caught up.)"""

from __future__ import annotations

import asyncio
import time

from infra.kafka import make_producer
from projections.faust_app import TAKE_MAX, build_app
from projections.live_batches import LiveBatches
from schemas.datasets import FEED_GAMES, FEED_TOPICS, topic_name

RECORDS = 3 * TAKE_MAX + 7


class _Projector:
    """What the faust app reads of a dataset projector: its topics, relay and tracked offsets."""

    def __init__(self, settings) -> None:
        self.topics = [topic_name("live", base, settings.topic_namespace) for base in FEED_TOPICS]
        self.relay = None
        self.committed: dict = {}


async def test_what_the_agent_takes_during_a_write_goes_out_as_one_batch(settings, topics):
    producer = make_producer(settings, linger_ms=5)
    await producer.start()
    try:
        games = topic_name("live", FEED_GAMES, settings.topic_namespace)
        sent = [await producer.send(games, f"record {i}".encode(), key=f"k{i % 16}".encode()) for i in range(RECORDS)]
        await asyncio.gather(*sent)
    finally:
        await producer.stop()

    batches: list[list] = []
    hold = asyncio.Event()

    async def apply(records: list) -> None:
        batches.append(records)
        if len(batches) == 1:
            await hold.wait()  # the first write is slow: the rest of the log arrives meanwhile

    async def nothing() -> None:
        return None

    writer = LiveBatches(apply)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    app = build_app(settings, f"{settings.topic_namespace}live-batches", {"live": _Projector(settings)},
                    {"live": writer}, nothing)
    writing = asyncio.create_task(writer.run())
    await app.start()
    try:
        deadline = time.monotonic() + 90
        while not batches or len(batches[0]) + len(writer.pending) < RECORDS:
            assert time.monotonic() < deadline, (
                f"{sum(map(len, batches))} written, {len(writer.pending)} waiting, of {RECORDS}")
            await asyncio.sleep(0.05)
        # the agent took the whole log while the first write was held
        assert len(batches) == 1 and len(batches[0]) + len(writer.pending) == RECORDS
        hold.set()
        await asyncio.wait_for(writer.drain(), 30)
        assert len(batches) == 2 and len(batches[1]) > TAKE_MAX  # one batch, not one per take
        values = [r.value for b in batches for r in b]
        assert sorted(values) == sorted(f"record {i}".encode() for i in range(RECORDS))  # each once
    finally:
        hold.set()
        writing.cancel()
        await app.stop()
