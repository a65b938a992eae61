"""The stall rule shared by `svc doctor` and the projector's watchdog."""

from __future__ import annotations

from projections.progress import is_stalled, records_behind, stuck_for

LIMIT = 30.0


def test_records_behind_counts_what_the_log_holds_past_the_tracked_offsets():
    ends = {("t", 0): 10, ("t", 1): 5, ("u", 0): 3}
    tracking = {("t", 0): (9, "e"), ("t", 1): (1, "e")}  # ("u", 0) never tracked
    assert records_behind(tracking, ends) == 0 + 3 + 3
    assert records_behind({("t", 0): (20, "e")}, {("t", 0): 10}) == 0  # ahead counts as not behind


def test_a_stall_is_behind_and_stuck_past_the_limit():
    assert is_stalled(1, LIMIT + 0.1, LIMIT)
    assert not is_stalled(0, LIMIT * 10, LIMIT)
    assert not is_stalled(5, LIMIT - 0.1, LIMIT)
    assert not is_stalled(5, None, LIMIT)


def test_stuck_counts_from_the_later_of_the_last_commit_and_the_oldest_waiting_record():
    # new input after an hour's quiet: the commit is old, what waits is not
    assert stuck_for(3600.0, 2.0) == 2.0
    # a backlog of old records being worked through: what waits is old, the commit is not
    assert stuck_for(1.0, 3600.0) == 1.0
    # stopped: both old
    assert is_stalled(10, stuck_for(LIMIT + 5, LIMIT + 9), LIMIT)
    assert stuck_for(40.0, None) == 40.0  # the record's time unknown: the commit's age alone
    assert stuck_for(None, 40.0) is None  # never committed: no clock
