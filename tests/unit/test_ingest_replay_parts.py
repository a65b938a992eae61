"""The pure parts of export and replay: merge order, timing offsets, speed, pacing."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ingest.export import LogRecord, merged
from ingest.pacing import offsets, paced, parse_speed
from ingest.pipeline import reason_kind

T0 = datetime(2024, 9, 8, 17, tzinfo=timezone.utc)

partition = st.lists(st.integers(min_value=0, max_value=50), max_size=30).map(sorted)


@given(st.lists(partition, min_size=1, max_size=5))
def test_merge_keeps_every_partitions_order(partitions):
    records = [
        [LogRecord("feed.games", p, offset, ts, b"k", b"v") for offset, ts in enumerate(times)]
        for p, times in enumerate(partitions)
    ]
    out = merged(records)
    assert len(out) == sum(map(len, partitions))
    for p in range(len(partitions)):
        assert [r.offset for r in out if r.partition == p] == list(range(len(partitions[p])))
    assert [r.timestamp_ms for r in out] == sorted(r.timestamp_ms for r in out)


def test_offsets_never_run_backwards():
    times = [T0, T0 + timedelta(seconds=10), T0 + timedelta(seconds=5), T0 + timedelta(seconds=30)]
    assert offsets(times) == [0.0, 10.0, 10.0, 30.0]
    assert offsets([]) == []


def test_speed_parsing():
    assert parse_speed("max") is None and parse_speed("MAX") is None and parse_speed(None) is None
    assert parse_speed("60") == 60.0 and parse_speed(2.5) == 2.5
    for bad in ("0", "-3", "fast"):
        with pytest.raises(ValueError):
            parse_speed(bad)


async def test_paced_keeps_relative_timing_at_n_times_speed():
    due = [0.0, 0.0, 10.0, 20.0, 20.0]
    started = time.monotonic()
    seen = []
    async for part in paced(due, speed=100.0):  # 20 s of recording in 0.2 s
        seen.append((round(time.monotonic() - started, 2), list(range(len(due)))[part]))
    assert [items for _, items in seen] == [[0, 1], [2], [3, 4]]
    assert seen[1][0] >= 0.09 and seen[2][0] >= 0.19 and seen[2][0] < 1.0


async def test_paced_at_max_speed_sends_in_large_slices_without_waiting():
    started = time.monotonic()
    parts = [p async for p in paced([float(i) for i in range(12_000)], speed=None, max_batch=5000)]
    assert [(p.start, p.stop) for p in parts] == [(0, 5000), (5000, 10000), (10000, 12000)]
    assert time.monotonic() - started < 0.5
    await asyncio.sleep(0)


def test_dead_letter_reasons_are_counted_by_kind():
    a = reason_kind("betfair: implausible overround 1.6995 (placeholder or broken prices -5000, -256)")
    b = reason_kind("betfair: implausible overround 1.9608 (placeholder or broken prices -5000, -5000)")
    assert a == b and reason_kind("unknown NFL team 'XYZ'") == reason_kind("unknown NFL team 'ABC'")
