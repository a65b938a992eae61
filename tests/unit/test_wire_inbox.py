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
    assert inbox.pending() and inbox.take() is None  # everything pending dropped; the reader is woken
    assert not inbox.pending()
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
    assert first.take_restart() == STOPPING and first.take() is None
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


async def test_many_deltas_wake_the_reader_once_and_are_held_by_reference():
    inbox = Inbox()
    shared = Delta(1, "market.update", b'{"op":"delta"}', topic="market:m")
    waiting = asyncio.ensure_future(inbox.wait())
    await asyncio.sleep(0)
    for _ in range(3):
        inbox.put("market:m", shared)
    assert not waiting.done()  # woken, not yet run: the three arrive in one turn
    await asyncio.wait_for(waiting, 1)
    taken = [inbox.take() for _ in range(3)]
    assert all(d is shared for d in taken) and not inbox.pending()  # the fan-out's Delta itself
    assert shared.ws_event is shared.ws_event and shared.ws_event["text"] == '{"op":"delta"}'  # made once


async def test_wait_returns_on_a_poke_or_its_timeout():
    inbox = Inbox()
    started = asyncio.get_running_loop().time()
    await inbox.wait(0.05)
    assert asyncio.get_running_loop().time() - started >= 0.04 and not inbox.pending()
    waiting = asyncio.ensure_future(inbox.wait(10))
    await asyncio.sleep(0)
    inbox.poke()
    await asyncio.wait_for(waiting, 1)
