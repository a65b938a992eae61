"""A connection's inbox (wire/fanout.py) and the process's live connections (api/wire_serving.py):
a full inbox starts over, a stopping process closes every connection, and stopping is final."""

from __future__ import annotations

import asyncio

from api.wire_live import LiveConnections
from wire.fanout import STOPPING, Delta, Inbox


def delta(seq: int) -> Delta:
    return Delta(seq, "game.state", b"{}")


async def test_a_full_inbox_starts_over_and_wakes_its_reader():
    inbox = Inbox(size=3)
    for seq in range(1, 5):
        inbox.put("game:gm_x", delta(seq))
    assert inbox.queue.get_nowait() is None  # everything pending dropped; the reader is woken
    assert inbox.take_restart() == "slow_consumer" and inbox.take_restart() is None


async def test_stopping_is_final_and_reaches_connections_opened_meanwhile():
    live = LiveConnections()
    first, second = Inbox(), Inbox()
    live.enter(first)
    first.put("game:gm_x", delta(1))
    closing = asyncio.ensure_future(live.close_all())
    await asyncio.sleep(0)
    assert not closing.done()  # waits for the connection to go
    first.start_over("reconnected")  # a broker reconnect does not undo a stop
    assert first.take_restart() == STOPPING and first.queue.get_nowait() is None
    live.enter(second)  # opened while stopping: told at once
    assert second.take_restart() == STOPPING
    live.leave(first)
    await asyncio.sleep(0)
    assert not closing.done()
    live.leave(second)
    await asyncio.wait_for(closing, 1)
