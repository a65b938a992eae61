"""A connection's inbox (wire/fanout.py) and the process's live connections (api/wire_serving.py):
a full inbox starts over, a stopping process closes every connection, and stopping is final."""

from __future__ import annotations

import asyncio

from api.wire_live import LiveConnections
from wire.fanout import STOPPING, Delta, Inbox


def delta(seq: int) -> Delta:
    return Delta(seq, "game.state", b"{}")


async def test_a_full_inbox_starts_over_and_wakes_its_reader():
    inbox = Inbox(max_messages=3)
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


async def test_the_send_queue_is_bounded_by_bytes_and_warns_once_per_slow_spell():
    inbox = Inbox(max_messages=100, max_bytes=1000)
    big = Delta(1, "market.update", b"x" * 200)
    for seq in range(1, 3):  # 400 bytes: under half
        inbox.put("market:m", Delta(seq, "market.update", big.payload))
    assert not inbox.take_warning() and inbox.pending_bytes == 400
    inbox.put("market:m", Delta(3, "market.update", big.payload))  # 600 > 500: slow
    assert inbox.take_warning() and not inbox.take_warning()  # once
    inbox.put("market:m", Delta(4, "market.update", big.payload))
    assert not inbox.take_warning()  # the same spell
    for _ in range(4):
        await inbox.get()
    assert inbox.pending_bytes == 0  # caught up: the next spell is warned again
    for seq in range(5, 8):
        inbox.put("market:m", Delta(seq, "market.update", big.payload))
    assert inbox.take_warning()
    assert not inbox.alarm.is_set()
    for seq in range(8, 11):  # 6 x 200 > 1000: dropped, the reader woken, the alarm raised
        inbox.put("market:m", Delta(seq, "market.update", big.payload))
    assert inbox.alarm.is_set() and inbox.pending_bytes == 0
    assert await inbox.get() is None and inbox.take_restart() == "slow_consumer"
    assert not inbox.alarm.is_set()  # a stream starts over; the socket has closed by then
