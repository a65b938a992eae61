"""A connection's inbox (wire/fanout.py) and the process's live connections (api/wire_serving.py):
a full inbox starts over, a stopping process closes every connection, and stopping is final."""

from __future__ import annotations

import asyncio

from api.wire_live import LiveConnections
from wire.fanout import BEHIND, BEHIND_FACTOR, FREE_TURNS, STOPPING, Delta, Inbox, loop_turns


def delta(seq: int) -> Delta:
    return Delta(seq, "game.state", b"{}")


def stuck(inbox: Inbox) -> None:
    """The connection's write to its client is pending and stays so (a client that does not read)."""
    inbox.writing()


def turns(n: int) -> None:
    """n turns of the loop pass (LoopTurns counts them from a timer; here, at once)."""
    loop_turns().count += n


async def test_a_full_inbox_starts_over_and_wakes_its_reader():
    inbox = Inbox(max_messages=3)
    stuck(inbox)
    for seq in range(1, 5):
        inbox.put("game:gm_x", delta(seq))
        turns(FREE_TURNS + 10)
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
    stuck(inbox)
    for seq in range(1, 3):  # 400 bytes: under half
        inbox.put("market:m", Delta(seq, "market.update", big.payload))
    turns(FREE_TURNS + 10)
    assert not inbox.take_warning() and inbox.pending_bytes == 400
    inbox.put("market:m", Delta(3, "market.update", big.payload))  # 600 > 500: slow
    assert inbox.take_warning() and not inbox.take_warning()  # once
    inbox.put("market:m", Delta(4, "market.update", big.payload))
    assert not inbox.take_warning()  # the same spell
    for _ in range(4):
        await inbox.get()
    assert inbox.pending_bytes == 0  # caught up: the next spell is warned again
    inbox.put("market:m", Delta(5, "market.update", big.payload))
    turns(FREE_TURNS + 10)  # still stuck
    for seq in range(6, 8):
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


async def test_a_queue_that_grows_while_its_writes_keep_completing_is_the_process_behind():
    """The loop is behind (long turns): the connection's writes each complete within a turn, yet
    deltas arrive faster than turns pass. No warning, no slow_consumer: only far past its bounds
    it starts over quietly (fresh snapshots), and it never closes."""
    inbox = Inbox(max_messages=10, max_bytes=1 << 20)
    seq = 0
    while True:
        seq += 1
        inbox.put("market:m", delta(seq))
        inbox.put("market:m", delta(seq))  # two arrive per write it completes
        if inbox.restart is not None:
            break
        inbox.writing()
        turns(1)
        inbox.written()
        inbox.take()
        assert not inbox.take_warning()
    assert inbox.restart == BEHIND and seq > 10  # past BEHIND_FACTOR x its bound, not at it
    assert inbox.count() == 1 and inbox.take() is None and inbox.take_restart() == BEHIND


async def test_a_write_held_by_its_client_makes_the_queue_its_own_however_busy_the_loop():
    """The same arrivals, but the connection's one write stays pending while the loop turns: its
    client does not read. Warned past half its bound, slow_consumer past it."""
    inbox = Inbox(max_messages=10, max_bytes=1 << 20)
    inbox.writing()
    warned_at = None
    for seq in range(1, 12):
        inbox.put("market:m", delta(seq))
        turns(1)
        if warned_at is None and inbox.take_warning():
            warned_at = seq
    assert warned_at is not None and 5 < warned_at <= 10
    assert inbox.restart == "slow_consumer"
    assert BEHIND_FACTOR > 1


async def test_a_reader_fast_again_after_a_slow_spell_is_judged_afresh():
    inbox = Inbox(max_messages=4)
    stuck(inbox)
    for seq in range(1, 4):
        inbox.put("market:m", delta(seq))
        turns(FREE_TURNS + 5)
    assert inbox.take_warning()
    inbox.written()  # the client read at last
    while inbox.pending():
        inbox.take()
    for seq in range(4, 40):  # now every write completes at once
        inbox.put("market:m", delta(seq))
        inbox.writing()
        turns(1)
        inbox.written()
        inbox.take()
    assert not inbox.take_warning() and inbox.restart is None
