"""The stall rule shared by `svc doctor` and the projector's watchdog."""

from __future__ import annotations

from projections.progress import STALL_AFTER, is_stalled, records_behind


def test_records_behind_counts_what_the_log_holds_past_the_tracked_offsets():
    ends = {("t", 0): 10, ("t", 1): 5, ("u", 0): 3}
    tracking = {("t", 0): (9, "e"), ("t", 1): (1, "e")}  # ("u", 0) never tracked
    assert records_behind(tracking, ends) == 0 + 3 + 3
    assert records_behind({("t", 0): (20, "e")}, {("t", 0): 10}) == 0  # ahead counts as not behind


def test_a_stall_is_behind_and_idle_past_the_limit():
    assert is_stalled(1, STALL_AFTER + 0.1)
    assert not is_stalled(0, STALL_AFTER * 10)
    assert not is_stalled(5, STALL_AFTER - 0.1)
    assert not is_stalled(5, None)
