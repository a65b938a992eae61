"""Group commit for the live path: what the faust agent takes while a batch is being written
goes into the next batch, so a projector behind the log writes bigger batches, not more of them.

Why: faust's `take_events` adds nothing to its buffer while the agent holds the batch it
yielded, so an agent that writes each batch before taking the next one gets only what faust
delivers in `within` (5 ms) after each write: a few dozen records at a time however far behind
it is (measured: batches of p50 11-70 records while 100,000 records behind). Each write has a
fixed cost (a transaction, the tracking fence, the seqs), so such a projector commits at a rate
set by that cost, not by the load, and once behind never catches up. Here the agent only hands
its records over (`add`) and goes on taking; one writer per dataset (`run`) applies everything
handed over since its last write as one batch.

A batch written while more records wait keeps the dataset's lock for the next one, and so does
one after which records arrive within LIVE_LINGER: `idle` (the writer lets go of the lock;
pg_writer.SharedLock) is called only once nothing arrived for that long after a write. Measured
at 2,000 events/s with `idle` right after any write that left nothing waiting: 0.4-1.1 lock
round trips per batch besides the batch's own, as records come in faust's takes.

Bounded: a batch holds at most `limit` records (a commit's time stays bounded however far behind
we are), and `add` waits while `limit` records are waiting, so faust's own buffers, and its
fetching, stop there (the backlog stays in the log, not in memory).
"""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable, Generic, TypeVar

R = TypeVar("R")
LIVE_BATCH_MAX = 10_000  # records per live batch; the catch-up's are 20,000 (projections.replay)
LIVE_LINGER = 0.05  # seconds without records after a write before `idle`


class LiveBatches(Generic[R]):
    def __init__(self, apply: Callable[[list[R]], Awaitable[object]], limit: int = LIVE_BATCH_MAX,
                 idle: Callable[[], Awaitable[object]] | None = None, linger: float = LIVE_LINGER) -> None:
        self.apply = apply
        self.limit = limit
        self.idle = idle
        self.linger = linger
        self.pending: list[R] = []
        self.writing = False
        self.failed: BaseException | None = None
        self._changed = asyncio.Condition()

    async def add(self, records: list[R]) -> None:
        """Hand records over (in log order); waits while a full batch is already waiting."""
        async with self._changed:
            await self._changed.wait_for(lambda: self.failed is not None or len(self.pending) < self.limit)
            if self.failed is not None:
                raise RuntimeError("the live batch writer failed") from self.failed
            self.pending.extend(records)
            self._changed.notify_all()

    async def run(self) -> None:
        """The writer: apply what was handed over, at most `limit` records at a time, until cancelled
        or a batch fails (the failure is raised here and by every later `add`); `idle` once
        nothing arrived within `linger` after a write."""
        while True:
            async with self._changed:
                await self._changed.wait_for(lambda: bool(self.pending))
                batch, self.pending = self.pending[: self.limit], self.pending[self.limit:]
                self.writing = True
                self._changed.notify_all()  # room for `add`
            try:
                await self.apply(batch)
                if self.idle is not None and not await self._more_within(self.linger):
                    await self.idle()
            except BaseException as exc:
                async with self._changed:
                    self.failed = exc
                    self.writing = False
                    self._changed.notify_all()
                raise
            async with self._changed:
                self.writing = False
                self._changed.notify_all()

    async def _more_within(self, seconds: float) -> bool:
        """Whether records are waiting, or arrive within `seconds`."""
        async with self._changed:
            try:
                await asyncio.wait_for(self._changed.wait_for(lambda: bool(self.pending)), seconds)
            except asyncio.TimeoutError:
                pass
            return bool(self.pending)

    async def drain(self) -> None:
        """Wait until everything handed over is applied (or the writer failed)."""
        async with self._changed:
            await self._changed.wait_for(
                lambda: self.failed is not None or (not self.pending and not self.writing))


__all__ = ["LIVE_BATCH_MAX", "LiveBatches"]
