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

Bounded: a batch holds at most `limit` records (a commit's time stays bounded however far behind
we are), and `add` waits while `limit` records are waiting, so faust's own buffers, and its
fetching, stop there (the backlog stays in the log, not in memory).
"""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable, Generic, TypeVar

R = TypeVar("R")
LIVE_BATCH_MAX = 10_000  # records per live batch; the catch-up's are 20,000 (projections.replay)


class LiveBatches(Generic[R]):
    def __init__(self, apply: Callable[[list[R]], Awaitable[object]], limit: int = LIVE_BATCH_MAX) -> None:
        self.apply = apply
        self.limit = limit
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
        or a batch fails (the failure is raised here and by every later `add`)."""
        while True:
            async with self._changed:
                await self._changed.wait_for(lambda: bool(self.pending))
                batch, self.pending = self.pending[: self.limit], self.pending[self.limit:]
                self.writing = True
                self._changed.notify_all()  # room for `add`
            try:
                await self.apply(batch)
            except BaseException as exc:
                async with self._changed:
                    self.failed = exc
                    self.writing = False
                    self._changed.notify_all()
                raise
            async with self._changed:
                self.writing = False
                self._changed.notify_all()

    async def drain(self) -> None:
        """Wait until everything handed over is applied (or the writer failed)."""
        async with self._changed:
            await self._changed.wait_for(
                lambda: self.failed is not None or (not self.pending and not self.writing))


__all__ = ["LIVE_BATCH_MAX", "LiveBatches"]
