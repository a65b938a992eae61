"""Rate-window stores against real parts: Redis when available (else the in-process fallback that
serves in its place), and the in-process store. One contract, proven on each."""

from __future__ import annotations

import asyncio
import secrets

import pytest
import redis.asyncio as aioredis

from access.limiter import MemoryWindows, Windows, shared_redis
from access.window import RatePolicy
from infra.net import free_port


@pytest.fixture(params=["shared", "in-process"])
async def windows(request, redis_url):  # noqa: F811
    """`shared`: Windows over Redis when one can be had (else its in-process fallback).

    Its waits are generous: what these tests prove is the window's contract, and on a loaded box
    a burst of 100 calls outlasted the product's 2 s wait for a connection in a CI run; those
    calls were counted in-process by design (test_redis_down_falls_back_to_in_process_windows)
    and 50 were admitted where the limit was 25."""
    client = (shared_redis(redis_url, wait=60.0, io_timeout=30.0)
              if request.param == "shared" and redis_url else None)
    yield Windows(client, prefix=f"test:{secrets.token_hex(4)}:")
    if client is not None:
        await client.aclose()


async def test_admits_exactly_the_limit_under_concurrency(windows):
    policy = RatePolicy("free", 25, 60)
    readings = await asyncio.gather(*(windows.hit("acct_x:live", policy) for _ in range(100)))
    allowed = [r for r in readings if r.allowed]
    assert len(allowed) == 25
    assert sorted(r.count for r in allowed) == list(range(1, 26))  # each admission saw the one before
    assert all(r.count == 25 for r in readings if not r.allowed)
    # another subject has a window of its own
    assert (await windows.hit("acct_y:live", policy)).allowed


async def test_a_burst_wider_than_the_connection_pool_is_counted_in_the_shared_window(redis_url):  # noqa: F811
    """More concurrent calls than connections queue for one; none slips into the in-process count.

    What is tested is the queue, not the time-outs: the wait for a connection and for a reply are
    generous here, because on a loaded two-core CI box 150 calls through 4 connections can take
    longer than the product's 2 s wait and 1 s reply bound, and a call past either is counted
    in-process by design (test_redis_down_falls_back_to_in_process_windows), which admitted 124
    of 150 in one CI run.
    """
    if not redis_url:
        pytest.skip("needs redis-server or REDIS_URL")
    client = shared_redis(redis_url, connections=4, wait=60.0, io_timeout=30.0)
    try:
        windows = Windows(client, prefix=f"test:{secrets.token_hex(4)}:")
        policy = RatePolicy("free", 120, 60)
        readings = await asyncio.gather(*(windows.hit("acct_burst:live", policy) for _ in range(150)))
        assert len(windows.memory) == 0  # nothing was counted in-process
        assert sum(r.allowed for r in readings) == 120
    finally:
        await client.aclose()


async def test_window_slides_and_admits_again_once_the_oldest_call_leaves(windows):
    policy = RatePolicy("t", 2, 2)
    first = await windows.hit("s", policy)
    await asyncio.sleep(1)
    second = await windows.hit("s", policy)
    refused = await windows.hit("s", policy)
    assert first.allowed and second.allowed
    assert not refused.allowed and refused.count == 2 and refused.oldest == first.oldest
    # wait until the first call has left the window, by the store's own clock; the second stays
    await asyncio.sleep(first.oldest + policy.window - refused.now + 0.05)
    again = await windows.hit("s", policy)
    assert again.allowed and again.count == 2 and again.oldest == second.now


async def test_two_api_processes_share_one_window_through_redis(redis_url):  # noqa: F811
    """Two clients with their own connections stand for two API processes."""
    prefix = f"test:{secrets.token_hex(4)}:"
    clients = [aioredis.from_url(redis_url) if redis_url else None for _ in range(2)]
    try:
        a, b = Windows(clients[0], prefix), Windows(clients[1], prefix)
        policy = RatePolicy("free", 30, 60)
        readings = await asyncio.gather(*(w.hit("acct_z:live", policy) for w in [a, b] * 50))
        admitted = sum(r.allowed for r in readings)
        if redis_url:
            assert admitted == 30  # one window across both processes
        else:
            assert admitted == 60  # without Redis each process keeps its own (documented)
    finally:
        for c in clients:
            if c is not None:
                await c.aclose()


async def test_redis_down_falls_back_to_in_process_windows():
    dead = aioredis.from_url(f"redis://127.0.0.1:{free_port()}/0", socket_connect_timeout=0.2)
    try:
        windows = Windows(dead, prefix="test:")
        policy = RatePolicy("free", 3, 60)
        readings = [await windows.hit("k", policy) for _ in range(5)]
        assert [r.allowed for r in readings] == [True, True, True, False, False]
    finally:
        await dead.aclose()


async def test_in_process_store_forgets_idle_subjects():
    now = [1000.0]
    memory = MemoryWindows(clock=lambda: now[0], sweep_every=1)
    policy = RatePolicy("anonymous", 60, 600)
    for i in range(10):
        await memory.hit(f"addr:{i}", policy)
    assert len(memory) == 10
    now[0] += 601  # every logged call has left its window
    await memory.hit("addr:new", policy)
    assert len(memory) == 1


async def test_a_redis_that_accepts_but_never_answers_costs_a_call_its_timeout_then_counts_in_process():
    """A hung Redis (the socket accepts, no reply ever comes) must not hold requests forever."""
    silent: list[asyncio.StreamWriter] = []

    async def accept(reader, writer):
        silent.append(writer)  # read nothing, answer nothing

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = shared_redis(f"redis://127.0.0.1:{port}/0", io_timeout=0.3)
    try:
        windows = Windows(client, prefix="test:", retry_after=60)
        policy = RatePolicy("free", 2, 60)
        clock = asyncio.get_running_loop().time
        started = clock()
        first = await asyncio.wait_for(windows.hit("k", policy), 10)
        waited = clock() - started
        assert first.allowed and 0.25 <= waited < 5  # one call pays the timeout, and no more
        started = clock()
        rest = [await asyncio.wait_for(windows.hit("k", policy), 10) for _ in range(2)]
        assert clock() - started < 0.25  # Redis is not asked again within `retry_after`
        assert [r.allowed for r in rest] == [True, False]  # the in-process window
        assert len(windows.memory) == 1
    finally:
        await client.aclose()
        for w in silent:
            w.close()
        server.close()
        await server.wait_closed()
