"""`api.routes._db.both`: two queries side by side on two connections, or one after the other on
one; either way both results in order, and a failure raised as itself with nothing left
unawaited (GET /v1/games/{id} reads a game's row and its markets through it)."""

from __future__ import annotations

import asyncio
import gc
import warnings

import pytest

from api.routes._db import both


async def _after(seconds: float, value, log: list):
    log.append(("start", value))
    await asyncio.sleep(seconds)
    log.append(("end", value))
    return value


async def _fails(log: list):
    log.append(("start", "fails"))
    await asyncio.sleep(0)
    raise LookupError("no such row")


async def test_apart_runs_both_at_once():
    log: list = []
    assert await both(_after(0.05, "a", log), _after(0.01, "b", log), apart=True) == ("a", "b")
    # the second started before the first ended, and ended first
    assert log == [("start", "a"), ("start", "b"), ("end", "b"), ("end", "a")]


async def test_together_runs_one_after_the_other():
    log: list = []
    assert await both(_after(0.01, "a", log), _after(0.01, "b", log), apart=False) == ("a", "b")
    assert log == [("start", "a"), ("end", "a"), ("start", "b"), ("end", "b")]


@pytest.mark.parametrize("apart", [True, False])
async def test_a_failure_is_raised_as_itself_and_nothing_is_left_unawaited(apart):
    log: list = []
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(LookupError):
            await both(_fails(log), _after(0.05, "b", log), apart=apart)
        gc.collect()  # an unawaited coroutine warns when collected
    assert not [w for w in seen if "never awaited" in str(w.message)]
    # side by side the second was started and then cancelled; one after the other it never started
    assert ("end", "b") not in log
    assert (("start", "b") in log) is apart
