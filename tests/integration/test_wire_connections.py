"""Open Wire connections counted in Postgres: the same numbers for every API process, atomic
under concurrency; rows of a process that died stop counting at once, rows never counted out
once stale."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timedelta, timezone

from infra.db import create_pool
from wire.limits import PER_ADDRESS, OpenConnections
from wire.presence import Presence


async def test_limits_hold_across_processes_and_under_concurrency(database_url):
    pool = await create_pool(database_url, min_size=1, max_size=10)
    try:
        first, second = OpenConnections(pool, 60), OpenConnections(pool, 60)  # two API processes
        opened = await asyncio.gather(*(
            (first if i % 2 else second).open("addr:a", f"acct_{i}", 100) for i in range(12)
        ))
        admitted = [cid for cid, _ in opened if cid is not None]
        assert len(admitted) == PER_ADDRESS  # never more, whichever process and however interleaved
        assert all("per address" in why for cid, why in opened if cid is None)

        account = [await first.open(f"addr:{i}", "acct_x", 3) for i in range(3)]
        assert all(cid is not None for cid, _ in account)
        cid, why = await second.open("addr:9", "acct_x", 3)
        assert cid is None and "for this plan" in why
        await second.close(account[0][0])  # a connection that went away is counted out
        cid, why = await second.open("addr:9", "acct_x", 3)
        assert cid is not None and why is None
    finally:
        await pool.close()


async def test_rows_not_refreshed_stop_counting(database_url):
    pool = await create_pool(database_url, min_size=1, max_size=2)
    try:
        registry = OpenConnections(pool, stale_seconds=60)
        long_ago = datetime.now(timezone.utc) - timedelta(seconds=120)
        for _ in range(PER_ADDRESS - 1):  # a process that died with four open connections
            assert (await registry.open("addr:b", "acct_y", 100, now=long_ago))[0] is not None
        live, _ = await registry.open("addr:b", "acct_y", 100, now=long_ago)
        assert live is not None
        registry.seen_soon(live)  # a ping: its row is refreshed, the four others are not
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            async with pool.acquire() as conn:
                if await conn.fetchval("SELECT seen_at > now() - interval '60 seconds' FROM access.wire_connections "
                                       "WHERE id = $1", live):
                    break
            await asyncio.sleep(0.1)
        # the four stale rows count no more, the refreshed one still does
        opened = [(await registry.open("addr:b", "acct_z", 100))[0] for _ in range(PER_ADDRESS)]
        assert all(opened[:-1]) and opened[-1] is None, opened
    finally:
        await pool.close()


async def test_pings_within_a_second_are_refreshed_together(database_url):
    """Every socket refreshes its row with each ping, without a round trip of its own: the
    refreshes asked for within a second are written together, soon after."""
    pool = await create_pool(database_url, min_size=1, max_size=2)
    try:
        registry = OpenConnections(pool, stale_seconds=60)
        long_ago = datetime.now(timezone.utc) - timedelta(seconds=120)
        ids = [(await registry.open(f"addr:s{i}", "acct_s", 100, now=long_ago))[0] for i in range(3)]
        for cid in (ids[0], ids[1], ids[0]):  # the third does not ping
            registry.seen_soon(cid)  # not awaited: the sender goes on sending
        deadline = time.monotonic() + 10
        while True:
            async with pool.acquire() as conn:
                fresh = await conn.fetch("SELECT id FROM access.wire_connections WHERE id = ANY($1) "
                                         "AND seen_at > now() - interval '60 seconds'", ids)
            if len(fresh) >= 2 or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.1)
        assert sorted(r["id"] for r in fresh) == sorted(ids[:2])
    finally:
        await pool.close()


async def test_connections_of_a_process_that_dies_stop_counting_at_once(database_url):
    """Each row names its process; a process killed outright loses its Postgres connection and so
    its presence lock, and its rows stop counting at once (not after three missed pings)."""
    pool = await create_pool(database_url, min_size=1, max_size=4)
    dying, alive = Presence(database_url), Presence(database_url)
    try:
        assert await dying.start(10) and await alive.start(10)
        registry = OpenConnections(pool, stale_seconds=65)  # 20 s pings: 3 pings + 5 s
        held = [await registry.open(f"addr:{i}", "acct_k", 3, dying.number) for i in range(2)]
        held.append(await registry.open("addr:9", "acct_k", 3, alive.number))
        assert all(cid is not None for cid, _ in held)
        assert (await registry.open("addr:7", "acct_k", 3, alive.number))[0] is None  # the plan's 3
        killed_at = time.monotonic()
        await dying.aclose()  # its connection closes, as the kernel closes a killed process's sockets
        while (await registry.open("addr:7", "acct_k", 3, alive.number))[0] is None:  # Postgres notices
            assert time.monotonic() - killed_at < 2, "a dead process's connections still count"
            await asyncio.sleep(0.05)
        # the live process's row still counts: one more place, not three
        assert (await registry.open("addr:8", "acct_k", 3, alive.number))[0] is not None
        assert (await registry.open("addr:6", "acct_k", 3, alive.number))[0] is None
    finally:
        await dying.aclose()
        await alive.aclose()
        await pool.close()
