"""When the API gives closed connections' memory back (infra/memory.py): a full collection and a
trim, once a quarter of what is open (at least COLLECT_MIN) has closed since the last."""

from __future__ import annotations

import asyncio

import pytest

from infra import memory


@pytest.fixture
def released(monkeypatch):
    done: list[str] = []
    monkeypatch.setattr(memory, "DELAY", 0.0)
    monkeypatch.setattr(memory.gc, "collect", lambda: done.append("collect"))
    monkeypatch.setattr(memory, "_trim", lambda pad: done.append("trim"))
    monkeypatch.setattr(memory, "_loops", type(memory._loops)())
    return done


async def _settle() -> None:
    for _ in range(5):  # the scheduled release, then its trim on the executor
        await asyncio.sleep(0.01)


async def test_closes_are_trimmed_and_collected_once_a_quarter_of_the_open_closed(released):
    open_now = 1_000
    for _ in range(199):  # 199 closed, 801 open: under a quarter of them
        open_now -= 1
        memory.release_after_close(open_now)
    await _settle()
    assert released == []
    memory.release_after_close(open_now - 1)  # the 200th: a quarter of the 800 left
    await _settle()
    assert released == ["collect", "trim"]


async def test_few_open_still_wait_for_the_minimum_before_a_collection(released):
    for _ in range(memory.COLLECT_MIN - 1):
        memory.release_after_close(0)
    await _settle()
    assert "collect" not in released
    memory.release_after_close(0)
    await _settle()
    assert released[-2:] == ["collect", "trim"]


async def test_closes_in_one_delay_share_one_release(released, monkeypatch):
    monkeypatch.setattr(memory, "DELAY", 0.05)
    for _ in range(memory.COLLECT_MIN * 2):
        memory.release_after_close(0)
    await asyncio.sleep(0.2)
    assert released == ["collect", "trim"]
