"""What an open, subscribed, idle Wire socket's own structures hold, counted in-process with
tracemalloc (not RSS, which moves with the allocator's pools): the Connection, its send queue
(Inbox), its subscriptions in the fan-out and its topics' feed watches, as the socket route
builds them for a client of bench_wire_fanout's (a game's topic and its two market topics).

Measured here: 6.8 KiB a connection before, 3.3 KiB now (CPython 3.11). Three empty containers
made up front were 2.4 KiB of it: the Inbox's deque (768 bytes empty), its alarm (an
asyncio.Event, 860 bytes with its own deque of waiters) and the Connection's deque of requests
(768 bytes); they are now made when first needed. And each topic's feed watch kept its own copy
of what the topic was last said to be (two structs, two tuples) and of the `Fresh` it follows
from, ~400 bytes a topic, the same for every connection: now one shared copy per value
(docs/benchmarks.md, "Wire fan-out: what an idle socket holds")."""

from __future__ import annotations

import asyncio
import gc
import time
import tracemalloc
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

from api.routes.socket import Connection
from infra.settings import load_settings
from wire.fanout import Alarm, Delta, DeltaFanout, Inbox
from wire.feed import Fresh
from wire.sessions import Session
from wire.tickets import TicketGrant

CONNECTIONS = 200
TOPICS = ("game:g1", "market:m1", "market:m2")
# between the two (6.8 and 3.3 KiB): the containers made up front again (2.4 KiB) fail it; the
# watches' copies (~1.2 KiB for three topics) are held to sharing by the test after it
BOUND = 5 * 1024


def _connections(n: int) -> tuple[list[Connection], DeltaFanout]:
    settings = load_settings(env={}, use_stack=False)
    fanout = DeltaFanout(settings)
    now = datetime.now(timezone.utc)
    app = SimpleNamespace(state=SimpleNamespace(app_state=SimpleNamespace(settings=settings, pool=None)))
    grant = TicketGrant("key_1", "acct_1", "scale", "live", "ws", None, now + timedelta(hours=1),
                        frozenset({"read:odds", "wire:connect"}))
    conns = []
    for i in range(n):
        socket = SimpleNamespace(app=app, scope={}, send=None)
        session = Session(f"wire_session_{i}", grant, now + timedelta(hours=24), set(TOPICS))
        conn = Connection(socket, fanout, session, None, None)
        for topic in TOPICS:  # what `Connection.snapshot` keeps of a topic once its snapshot is sent
            conn._attach(topic)
            conn.current[topic] = 1
            # each snapshot's read gives a Fresh of its own, its text and time new objects
            conn.feeds.watch(topic, Fresh(60_000, "".join(["The Odds ", "API"]), now + timedelta(0)), now)
        conns.append(conn)
    return conns, fanout


def _bytes_per_connection() -> float:
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        held = _connections(CONNECTIONS)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(held[0]) == CONNECTIONS
    return (after - before) / CONNECTIONS


async def test_an_idle_subscribed_connection_holds_no_empty_queues_nor_copies_of_shared_topic_state():
    per_connection = _bytes_per_connection()
    assert 0 < per_connection < BOUND, per_connection


async def test_the_watches_of_one_topic_share_what_it_was_said_to_be():
    conns, _ = _connections(3)
    watches = [conn.feeds._watches["market:m1"] for conn in conns]
    for w in watches[1:]:
        assert w.fresh is watches[0].fresh and w.said is watches[0].said and w.told is watches[0].told
    # what two of them are told changes (the game is final: settled): the new value's shared copy
    later = watches[0].fresh.as_of + timedelta(seconds=5)
    feeds = [w.update(Fresh(None, "The Odds API", later), later) for w in watches[:2]]
    assert all(f is not None and f.liveness.state == "settled" for f in feeds)
    assert watches[0].fresh is watches[1].fresh and watches[0].said is watches[1].said
    assert watches[2].told[1] == "live"  # the third unmoved


async def test_the_send_queue_makes_its_deque_only_while_something_is_pending():
    inbox = Inbox()
    assert not inbox.pending() and inbox.count() == 0
    inbox.put("market:m", Delta(1, "market.update", b"{}"))
    inbox.put("market:m", Delta(2, "market.update", b"{}"))
    assert inbox.count() == 2
    assert [inbox.take().seq, inbox.take().seq] == [1, 2]
    assert not inbox.pending() and inbox.pending_bytes == 0
    inbox.put("market:m", Delta(3, "market.update", b"{}"))  # a new spell, a new deque
    assert inbox.take().seq == 3
    inbox.start_over("reconnected")  # with nothing pending, too
    assert inbox.count() == 1 and inbox.take() is None and inbox.take_restart() == "reconnected"
    assert not inbox.pending()


async def test_the_alarm_wakes_its_waiters_as_an_event_does():
    alarm = Alarm()
    assert not alarm.is_set()
    waiters = [asyncio.ensure_future(alarm.wait()) for _ in range(2)]
    cancelled = asyncio.ensure_future(alarm.wait())
    await asyncio.sleep(0)
    cancelled.cancel()
    await asyncio.sleep(0)
    assert not any(w.done() for w in waiters)
    alarm.set()
    assert await asyncio.wait_for(asyncio.gather(*waiters), 1) == [True, True]
    assert alarm.is_set() and await alarm.wait()  # set: returns at once
    alarm.clear()
    assert not alarm.is_set()
    late = asyncio.ensure_future(alarm.wait())
    await asyncio.sleep(0.01)
    assert not late.done()  # cleared: waits for the next set
    alarm.set()
    assert await asyncio.wait_for(late, 1)
    started = time.monotonic()
    try:  # a timeout around a wait, as the socket's watch has, ends it
        async with asyncio.timeout(0.02):
            alarm.clear()
            await alarm.wait()
    except TimeoutError:
        pass
    assert time.monotonic() - started < 1 and alarm._waiters is None  # the timed-out waiter is gone
