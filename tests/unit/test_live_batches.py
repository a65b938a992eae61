"""The live path's group commit (projections/live_batches.py): what is handed over while a batch
is written goes into the next batch, batches never exceed the limit, a full backlog makes the
agent wait, and a failed write reaches the agent and anyone draining."""

from __future__ import annotations

import asyncio

import pytest

from projections.live_batches import LiveBatches


class Writes:
    """An apply whose writes are held until released, recording each batch."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.fail = False

    async def __call__(self, batch: list[int]) -> None:
        self.batches.append(batch)
        self.started.set()
        await self.release.wait()
        if self.fail:
            raise ValueError("the database went away")


async def _settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def test_what_arrives_during_a_write_is_one_batch_in_log_order():
    writes = Writes()
    batches = LiveBatches(writes, limit=1_000)
    writer = asyncio.create_task(batches.run())
    try:
        await batches.add([0, 1])
        await writes.started.wait()  # the first write holds [0, 1]
        for first in range(2, 50, 4):  # twelve takes arrive meanwhile
            await batches.add(list(range(first, first + 4)))
        writes.release.set()
        await batches.drain()
        # one write per batch handed over would be 13 writes; the backlog went as one
        assert writes.batches == [[0, 1], list(range(2, 50))]
    finally:
        writer.cancel()


async def test_batches_are_bounded_and_a_full_backlog_makes_the_agent_wait():
    writes = Writes()
    batches = LiveBatches(writes, limit=10)
    writer = asyncio.create_task(batches.run())
    try:
        await batches.add([0])
        await writes.started.wait()
        await batches.add(list(range(1, 8)))
        await batches.add(list(range(8, 14)))  # 13 waiting now: over the limit
        blocked = asyncio.create_task(batches.add([14, 15]))
        await _settle()
        assert not blocked.done()  # the agent waits (faust stops fetching), memory stays bounded
        writes.release.set()
        await blocked
        await batches.drain()
        assert writes.batches[:2] == [[0], list(range(1, 11))]  # the limit, not all 13 waiting
        assert [r for b in writes.batches for r in b] == list(range(16))
        assert max(len(b) for b in writes.batches) <= 10
    finally:
        writer.cancel()


async def test_a_failed_write_reaches_the_writer_the_agent_and_a_drain():
    writes = Writes()
    batches = LiveBatches(writes, limit=10)
    writer = asyncio.create_task(batches.run())
    await batches.add([0])
    await writes.started.wait()
    writes.fail = True
    writes.release.set()
    with pytest.raises(ValueError):
        await writer
    await batches.drain()  # returns: nothing will ever be written now
    with pytest.raises(RuntimeError, match="live batch writer failed"):
        await batches.add([1])


async def test_a_writer_cancelled_mid_write_does_not_leave_a_drain_waiting():
    writes = Writes()
    batches = LiveBatches(writes, limit=10)
    writer = asyncio.create_task(batches.run())
    await batches.add([0])
    await writes.started.wait()
    writer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await writer
    await asyncio.wait_for(batches.drain(), 5)


async def test_idle_is_called_once_a_write_leaves_nothing_waiting():
    """The writer keeps the dataset's lock from one batch to the next while records wait, and
    lets go of it (`idle`) only after a write that left nothing waiting."""
    writes = Writes()
    idles: list[int] = []

    async def idle() -> None:
        idles.append(len(writes.batches))

    batches = LiveBatches(writes, limit=1_000, idle=idle)
    writer = asyncio.create_task(batches.run())
    try:
        await batches.add([0])
        await writes.started.wait()
        await batches.add([1, 2])  # waits while [0] is written
        writes.release.set()
        await batches.drain()
        await _settle()
        assert writes.batches == [[0], [1, 2]]
        assert idles == [2]  # not after [0]: [1, 2] was waiting
        await batches.add([3])
        await batches.drain()
        await _settle()
        assert idles == [2, 3]
    finally:
        writer.cancel()


async def test_records_that_arrive_soon_after_a_write_keep_the_lock():
    """Records arriving within `linger` after a write: no `idle` in between (which would cost a
    round trip to let go of the lock and one to take it again)."""
    writes = Writes()
    writes.release.set()
    idles: list[int] = []

    async def idle() -> None:
        idles.append(len(writes.batches))

    batches = LiveBatches(writes, limit=1_000, idle=idle, linger=60)
    writer = asyncio.create_task(batches.run())
    try:
        await batches.add([0])
        await writes.started.wait()
        await _settle()  # [0] is written; the writer lingers
        assert idles == []
        batches.linger = 0  # from the next write on
        await batches.add([1])
        await batches.drain()
        assert writes.batches == [[0], [1]]
        assert idles == [2]
    finally:
        writer.cancel()
