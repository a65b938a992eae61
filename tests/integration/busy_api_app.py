"""`api.server:app` in a process that is itself behind: a task holds the event loop for
HOLD_SECONDS at every turn it gets (as a burst of work would), so every turn of the loop takes at
least that long and every connection's writes wait for it. For tests of what must not be blamed
on a connection when the server, not its client, is slow (tests/integration/test_wire_slow.py)."""

from __future__ import annotations

import asyncio
import time

from api.server import app as served

HOLD_SECONDS = 0.02


async def _hold_the_loop() -> None:
    while True:
        time.sleep(HOLD_SECONDS)  # blocking on purpose: the loop does nothing else meanwhile
        await asyncio.sleep(0)


class _Busy:
    def __init__(self, inner) -> None:
        self.inner = inner
        self.task: asyncio.Task | None = None

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            await self.inner(scope, self._until_stopping(receive), send)
            return
        if self.task is None:
            self.task = asyncio.get_running_loop().create_task(_hold_the_loop())
        await self.inner(scope, receive, send)

    def _until_stopping(self, receive):
        """The lifespan's receive; at shutdown the loop is let go first (a held loop stops too
        slowly for the test's stop, and a killed server leaves its worker behind)."""
        async def receive_lifespan():
            message = await receive()
            if message["type"] == "lifespan.shutdown" and self.task is not None:
                self.task.cancel()
            return message
        return receive_lifespan


app = _Busy(served)
