"""Open Wire connections counted in Postgres: the same numbers for every API process, atomic
under concurrency, and rows of a process that died stop counting once stale."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone

from infra.db import create_pool
from wire.limits import PER_ADDRESS, OpenConnections


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
        for _ in range(PER_ADDRESS):  # a process that died with five open connections
            assert (await registry.open("addr:b", "acct_y", 100, now=long_ago))[0] is not None
        live, _ = await registry.open("addr:b", "acct_y", 100)
        assert live is not None
        await registry.seen(live)
        assert (await registry.open("addr:b", "acct_z", 100))[0] is not None
    finally:
        await pool.close()
