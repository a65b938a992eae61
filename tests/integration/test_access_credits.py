"""Credit usage in real Postgres: atomic under concurrency, refundable, durable."""

from __future__ import annotations

import asyncio

from access.credits import CreditMeter
from infra.db import create_pool


async def test_concurrent_charges_never_overrun_the_allowance(database_url):
    pool = await create_pool(database_url, min_size=1, max_size=10)
    try:
        meter = CreditMeter(pool)
        results = await asyncio.gather(*(meter.charge("acct_a", "live", "m20261101", 1, 50) for _ in range(80)))
        charged = [used for ok, used in results if ok]
        assert len(charged) == 50 and sorted(charged) == list(range(1, 51))
        assert all(used == 50 for ok, used in results if not ok)
        assert await meter.used("acct_a", "live", "m20261101") == 50
    finally:
        await pool.close()


async def test_refund_gives_back_and_subjects_modes_periods_are_separate(database_url):
    pool = await create_pool(database_url, min_size=1, max_size=2)
    try:
        meter = CreditMeter(pool)
        assert await meter.charge("acct_a", "live", "m20261101", 1, 10) == (True, 1)
        assert await meter.charge("acct_a", "live", "m20261101", 1, 10) == (True, 2)
        assert await meter.refund("acct_a", "live", "m20261101", 1) == 1
        assert await meter.charge("acct_a", "test", "m20261101", 1, 10) == (True, 1)
        assert await meter.charge("acct_a", "live", "m20261201", 1, 10) == (True, 1)
        assert await meter.charge("addr:ff", "live", "d20261122", 1, 10) == (True, 1)
        assert await meter.used("acct_a", "live", "m20261101") == 1
        assert await meter.used("acct_b", "live", "m20261101") == 0
        assert await meter.charge("acct_a", "live", "m20261101", 20, 10) == (False, 1)  # price above allowance
    finally:
        await pool.close()


async def test_usage_survives_a_restart(database_url):
    first = await create_pool(database_url, min_size=1, max_size=2)
    for _ in range(7):
        await CreditMeter(first).charge("acct_r", "live", "m20261101", 1, 100)
    await first.close()  # the API process goes away
    second = await create_pool(database_url, min_size=1, max_size=2)
    try:
        assert await CreditMeter(second).used("acct_r", "live", "m20261101") == 7
        assert await CreditMeter(second).charge("acct_r", "live", "m20261101", 1, 100) == (True, 8)
    finally:
        await second.close()


async def test_key_less_rows_are_pruned_after_two_days_account_rows_are_kept(database_url):
    pool = await create_pool(database_url, min_size=1, max_size=2)
    rows = [("addr:old", "d20261101", 3), ("addr:recent", "d20261121", 1), ("acct_old", "m20250101", 400)]
    try:
        async with pool.acquire() as conn:
            for subject, period, days in rows:
                await conn.execute(
                    "INSERT INTO access.usage (subject, mode, period, used, updated_at) "
                    "VALUES ($1, 'live', $2, 5, now() - make_interval(days => $3))", subject, period, days)
        clock = [0.0]
        meter = CreditMeter(pool, clock=lambda: clock[0])
        assert await meter.charge("addr:new", "live", "d20261123", 1, 10) == (True, 1)  # prunes in the background
        await meter._pruning
        left = {r["subject"] for r in await pool.fetch(
            "SELECT subject FROM access.usage WHERE subject = ANY($1::text[])",
            ["addr:old", "addr:recent", "acct_old", "addr:new"])}
        assert left == {"addr:recent", "acct_old", "addr:new"}
        # at most once an hour per process
        first = meter._pruning
        await meter.charge("addr:new", "live", "d20261123", 1, 10)
        assert meter._pruning is first
        clock[0] += 3601
        await meter.charge("addr:new", "live", "d20261123", 1, 10)
        assert meter._pruning is not first
        await meter._pruning
    finally:
        await pool.close()
