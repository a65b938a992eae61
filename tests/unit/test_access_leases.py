"""Credit leases (access/leases.py): block sizes within their caps, and what a caller is told."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from access.leases import FAST_SECONDS, IDLE_SECONDS, MAX_BLOCK, Lease, block_cap


def test_small_allowances_are_charged_call_by_call():
    assert block_cap(200) == 1  # anonymous
    assert block_cap(1_999) == 1
    assert block_cap(6_000) == 6  # free
    assert block_cap(1_000_000) == 1_000  # scale
    assert block_cap(10**12) == MAX_BLOCK


def test_blocks_double_while_they_run_out_fast_and_halve_when_slow():
    lease = Lease()
    asked = []
    now = 100.0
    for _ in range(12):
        want = lease.want(1, 1_000_000, now)
        asked.append(want)
        lease.granted(want, lease.durable_used + want, now)
        assert lease.spend(lease.remaining, now)  # all of it, at once
        now += 0.1
    assert asked == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000, 1000]
    slow = lease.want(1, 1_000_000, now + FAST_SECONDS + 1)
    assert slow == 500


def test_near_the_end_of_the_allowance_blocks_shrink_to_one_call():
    lease = Lease(durable_used=5_990, block=6)
    assert lease.want(1, 6_000, 0.0) == 1  # 10 left: at most an eighth of it
    lease = Lease(durable_used=5_900, block=6)
    assert lease.want(1, 6_000, 0.0) == 6


@given(
    allowance=st.integers(1, 10**9), used=st.integers(0, 10**9), price=st.integers(1, 50),
    remaining=st.integers(0, 49), block=st.integers(1, 10**6),
)
def test_a_request_never_exceeds_the_caps_beyond_the_shortfall(allowance, used, price, remaining, block):
    lease = Lease(remaining=remaining, durable_used=used, block=block)
    want = lease.want(price, allowance, 0.0)
    assert want >= price - remaining  # the call it is taken for fits
    assert want <= max(price - remaining, block_cap(allowance), 1)
    assert want <= max(price - remaining, (allowance - used) // 8, 1)


def test_used_counts_every_grant_less_what_this_process_holds():
    lease = Lease()
    lease.granted(10, 510, 0.0)  # 500 used before, by anyone
    assert lease.used == 500
    assert lease.spend(3, 1.0) and lease.used == 503
    lease.give_back(1, 2.0)  # a non-2xx response
    assert lease.used == 502 and lease.remaining == 8
    assert not lease.spend(9, 3.0) and lease.remaining == 8
    assert not lease.idle(2.0 + IDLE_SECONDS - 1) and lease.idle(2.0 + IDLE_SECONDS)  # a refused spend touches nothing


def test_only_busy_leases_take_the_next_block_early():
    small = Lease(remaining=1, block=6)
    assert not small.running_low()  # small plans run their lease out first: they stay exact
    busy = Lease(remaining=200, block=1000)
    assert busy.running_low()
    assert not Lease(remaining=600, block=1000).running_low()
