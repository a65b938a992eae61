"""When the API gives closed connections' memory back (infra/memory.py): a full collection and a
trim, once a quarter of what is open (at least COLLECT_MIN) has closed since the last."""

from __future__ import annotations

import asyncio
import gc

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


@pytest.fixture
def gc_calls(monkeypatch):
    """What the release does to the collector, in order (the real collector is left alone)."""
    calls: list[str] = []
    monkeypatch.setattr(memory, "DELAY", 0.0)
    monkeypatch.setattr(memory.gc, "collect", lambda generation=2: calls.append(f"collect{generation}"))
    monkeypatch.setattr(memory.gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(memory.gc, "unfreeze", lambda: calls.append("unfreeze"))
    monkeypatch.setattr(memory, "_trim", lambda pad: calls.append("trim"))
    monkeypatch.setattr(memory, "_loops", type(memory._loops)())
    thresholds = gc.get_threshold()
    yield calls
    gc.set_threshold(*thresholds)  # keep_frozen's, real: the rest of the run keeps the interpreter's


async def test_opens_are_not_frozen_unless_the_process_keeps_them_frozen(gc_calls):
    for _ in range(200):
        memory.settle_after_open()
    await _settle()
    assert gc_calls == []


async def test_opens_within_a_delay_are_frozen_once_after_a_young_collection(gc_calls, monkeypatch):
    memory.keep_frozen()
    assert gc_calls == ["collect2", "freeze", "collect2"]  # start-up (the last over empty generations)
    gc_calls.clear()
    monkeypatch.setattr(memory, "DELAY", 0.05)
    for _ in range(200):
        memory.settle_after_open()
    await asyncio.sleep(0.2)
    assert gc_calls == ["collect1", "freeze", "collect2"]  # young garbage freed first; no full pass of any
    memory.settle_after_open()  # a later open: frozen in its turn
    await asyncio.sleep(0.2)
    assert gc_calls == ["collect1", "freeze", "collect2"] * 2


async def test_a_full_collection_after_closes_sees_the_frozen_sockets_and_freezes_again(gc_calls):
    memory.keep_frozen()
    gc_calls.clear()
    for _ in range(memory.COLLECT_MIN):
        memory.release_after_close(0)
    await _settle()
    # closed sockets' cycles may be frozen: given back to the collector, collected, the rest frozen
    assert gc_calls == ["unfreeze", "collect2", "freeze", "collect2", "trim"]


async def test_what_survives_a_full_pass_is_frozen_soon_after(monkeypatch):
    """The real collector: what a full pass leaves alive is frozen within REFREEZE_SECONDS, so the
    next full pass does not walk it again; with no full pass since, nothing more is frozen."""
    monkeypatch.setattr(memory, "REFREEZE_SECONDS", 0.05)
    monkeypatch.setattr(memory, "_loops", type(memory._loops)())
    try:
        memory.keep_frozen()
        alive = [[] for _ in range(20_000)]  # lists are always tracked
        passes, frozen = memory._full_passes(), gc.get_freeze_count()
        await asyncio.sleep(0.2)
        if memory._full_passes() == passes:  # no full pass of the collector's own meanwhile
            assert gc.get_freeze_count() <= frozen  # (frozen objects freed by their counts leave it)
        gc.collect()  # a full pass the module did not make
        await asyncio.sleep(0.2)
        ids = {id(x) for x in alive}
        assert gc.get_freeze_count() > frozen + len(alive) // 2
        assert not [x for x in gc.get_objects() if id(x) in ids]  # in no generation: no pass walks them
    finally:
        gc.unfreeze()


async def test_after_a_freeze_the_next_full_pass_comes_as_if_nothing_were_old(monkeypatch):
    """The collector's own full pass waits for a quarter as many objects as its last full pass
    left to come of age; the pass after a freeze leaves none, so a tenth of what start-up froze
    coming of age is enough (before: a quarter of everything start-up made)."""
    monkeypatch.setattr(memory, "_loops", type(memory._loops)())
    thresholds = gc.get_threshold()
    try:
        memory.keep_frozen()
        gc.set_threshold(100, 2, 2)  # a full pass considered every 400 objects that live
        passes = memory._full_passes()
        alive = [[] for _ in range(gc.get_freeze_count() // 10)]
        assert memory._full_passes() > passes, len(alive)
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


async def test_a_server_process_runs_young_passes_ten_times_less_often(monkeypatch):
    monkeypatch.setattr(memory, "_loops", type(memory._loops)())
    thresholds = gc.get_threshold()
    try:
        memory.keep_frozen()
        assert gc.get_threshold() == (memory.YOUNG_THRESHOLD, *thresholds[1:])
        young = gc.get_stats()[0]["collections"]
        alive = [[] for _ in range(memory.YOUNG_THRESHOLD // 2)]
        assert gc.get_stats()[0]["collections"] == young, len(alive)  # 700 would have run several
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


async def test_a_cycle_dropped_after_it_was_frozen_is_freed_once_the_frozen_set_grows(monkeypatch):
    """The real collector, no socket ever closing (a REST-only process): an object in a reference
    cycle, frozen while alive and dropped afterwards, is not kept for the life of the process;
    it is freed once what is frozen has grown by FROZEN_GROWTH since the last full look."""
    import weakref

    class Node:
        pass

    monkeypatch.setattr(memory, "REFREEZE_SECONDS", 0.05)
    monkeypatch.setattr(memory, "_loops", type(memory._loops)())
    thresholds = gc.get_threshold()
    try:
        memory.keep_frozen()
        cycle = Node()
        cycle.me = cycle
        gone = weakref.ref(cycle)
        gc.collect()  # a full pass of its own: what survived it, the cycle with it, is frozen
        await asyncio.sleep(0.2)
        del cycle
        gc.collect()  # frozen: no pass sees it
        await asyncio.sleep(0.2)
        assert gone() is not None
        grown = [[] for _ in range(int(gc.get_freeze_count() * memory.FROZEN_GROWTH) + 1000)]
        gc.collect()  # survives a full pass: frozen, and the frozen set has grown past the share
        for _ in range(100):  # a tick to freeze what grew, the next to see everything: each
            await asyncio.sleep(0.05)  # walks the whole heap, long in a suite's worker process
            if gone() is None:
                break
        assert gone() is None, len(grown)
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


async def test_what_opening_sockets_hold_never_makes_the_frozen_set_walked_again(monkeypatch):
    """The real collector: thousands of sockets opening grow the frozen set far past the share,
    but their garbage is the closing rule's; walking everything again on each quarter of growth
    would hold every socket's deliveries while they open."""
    monkeypatch.setattr(memory, "DELAY", 0.0)
    monkeypatch.setattr(memory, "REFREEZE_SECONDS", 0.05)
    monkeypatch.setattr(memory, "_loops", type(memory._loops)())
    walks: list[int] = []
    real = memory._collect_all
    monkeypatch.setattr(memory, "_collect_all", lambda due: (walks.append(1), real(due)))
    thresholds = gc.get_threshold()
    try:
        memory.keep_frozen()
        frozen = gc.get_freeze_count()
        held = [[] for _ in range(frozen)]  # what opened sockets hold: as much again as start-up
        memory.settle_after_open()
        await asyncio.sleep(0.3)
        assert gc.get_freeze_count() > frozen * 1.5, len(held)
        assert walks == []
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
