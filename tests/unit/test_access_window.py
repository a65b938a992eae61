"""The sliding log never admits more than `limit` calls in any span of `window` seconds, and
refuses only when it must."""

from __future__ import annotations

from collections import deque

from hypothesis import given, settings
from hypothesis import strategies as st

from access.window import LogReading, RatePolicy, admit, rate_state

calls = st.lists(st.floats(min_value=0, max_value=100, allow_nan=False), min_size=1, max_size=300).map(sorted)


@settings(max_examples=300)
@given(calls, st.integers(min_value=1, max_value=12), st.integers(min_value=1, max_value=30))
def test_never_more_than_limit_in_any_window_and_refuses_only_when_full(times, limit, window):
    log: deque[float] = deque()
    admitted: list[float] = []
    for t in times:
        reading = admit(log, t, limit, window)
        in_window = [a for a in admitted if t - window < a <= t]
        if reading.allowed:
            admitted.append(t)
            assert len(in_window) + 1 <= limit
            assert reading.count == len(in_window) + 1
        else:
            assert len(in_window) == limit  # refused only when the window is really full
            assert reading.count == limit
        assert reading.oldest == (min(in_window + ([t] if reading.allowed else [])))
    # any span (a, a + window]: the fullest one ends at an admitted call
    for end in admitted:
        assert sum(1 for a in admitted if end - window < a <= end) <= limit


def test_a_call_leaves_the_window_exactly_window_seconds_later():
    log: deque[float] = deque()
    assert admit(log, 10.0, 1, 60).allowed
    assert not admit(log, 69.999, 1, 60).allowed
    assert admit(log, 70.0, 1, 60).allowed


def test_rate_state_after_first_call_and_when_full():
    policy = RatePolicy("free", 120, 60)
    first = rate_state(policy, "all", LogReading(allowed=True, count=1, oldest=1000.25, now=1000.25))
    assert (first.remaining, first.reset_after, first.reset_at, first.allowed) == (119, 60, 1061, True)
    full = rate_state(policy, "all", LogReading(allowed=False, count=120, oldest=1000.25, now=1030.0))
    assert (full.remaining, full.reset_after, full.reset_at, full.allowed) == (0, 31, 1061, False)
