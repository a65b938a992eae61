"""Resume rules (the last two minutes of deltas) and SSE framing: pure."""

from __future__ import annotations

from hypothesis import given, strategies as st

from wire import sse
from wire.recent import RecentDeltas, after, next_step


def filled(seqs, now=0.0, **kw) -> RecentDeltas:
    ring = RecentDeltas(**kw)
    for seq in seqs:
        ring.add("t", seq, f"d{seq}", now)
    return ring


@given(st.integers(1, 50), st.integers(0, 60))
def test_a_client_anywhere_in_a_contiguous_run_gets_exactly_what_it_missed(n, last):
    ring = filled(range(1, n + 1))
    got = ring.since("t", last, 1.0)
    if last <= n:
        assert [seq for seq, _ in got] == list(range(last + 1, n + 1))
        assert [p for _, p in got] == [f"d{s}" for s in range(last + 1, n + 1)]
    else:
        assert got is None  # a seq the topic never reached: snapshot


def test_what_the_ring_cannot_prove_complete_needs_a_snapshot():
    assert filled([5, 6, 7]).since("t", 3, 0) is None  # 4 never seen
    assert filled([5, 6, 8]).since("t", 5, 0) is None  # 7 missed
    assert filled([5, 6, 7]).since("t", 4, 0) == [(5, "d5"), (6, "d6"), (7, "d7")]
    assert filled([5, 6, 7]).since("t", 7, 0) == []  # current: nothing to replay
    assert filled([5]).since("other", 5, 0) is None


def test_entries_older_than_the_window_are_forgotten():
    ring = RecentDeltas(seconds=120)
    ring.add("t", 1, "a", now=0)
    ring.add("t", 2, "b", now=100)
    assert ring.since("t", 0, now=110) == [(1, "a"), (2, "b")]
    assert ring.since("t", 0, now=130) is None  # seq 1 is forgotten: a client at 0 needs a snapshot
    assert ring.since("t", 1, now=130) == [(2, "b")]  # seqs are contiguous: 2 is all it missed
    assert ring.since("t", 2, now=200) == []
    assert ring.since("t", 2, now=221) is None


def test_redelivered_deltas_keep_the_first_copy_and_topics_are_bounded():
    ring = filled([1, 2, 2, 1, 3], topics=2)
    assert ring.since("t", 0, 0) == [(1, "d1"), (2, "d2"), (3, "d3")]
    ring.add("u", 1, "x", 0)
    ring.add("v", 1, "y", 0)  # three topics, room for two: the least recently changed goes
    assert ring.since("t", 0, 0) is None and ring.since("v", 0, 0) == [(1, "y")]


def test_sse_framing():
    assert sse.event(b'{"a":1}', name="snapshot", event_id=7) == b'event: snapshot\nid: 7\ndata: {"a":1}\n\n'
    assert sse.event(b"x\ny") == b"data: x\ndata: y\n\n"
    assert sse.comment("ping") == b": ping\n\n"
    assert [sse.last_event_id(v) for v in (None, "12", " 3 ", "-1", "x", "1" * 19)] == [None, 12, 3, None, None, None]


@given(st.lists(st.integers(1, 30), max_size=60), st.integers(0, 10))
def test_following_the_gap_rule_never_shows_a_seq_twice_or_skips_one(arrivals, start):
    current, shown = start, []
    for seq in arrivals:
        step = next_step(current, seq)
        if step == "send":
            shown.append(seq)
            current = seq
        elif step == "resnapshot":  # a fresh snapshot at this seq; deltas continue from it
            shown.append(("snapshot", seq))
            current = seq
    deltas_since_snapshot = start
    for item in shown:
        if isinstance(item, tuple):
            deltas_since_snapshot = item[1]
        else:
            assert item == deltas_since_snapshot + 1
            deltas_since_snapshot = item


def test_after_takes_a_complete_run_of_seqs_or_nothing():
    log = [(3, "c"), (4, "d"), (4, "d"), (5, "e"), (4, "d")]  # exact duplicates, as the log may hold
    assert after(log, 3) == [(4, "d"), (5, "e")]
    assert after(log, 5) == []  # the client's last seq is on the log: it is current
    assert after(log, 2) == [(3, "c"), (4, "d"), (5, "e")]  # 3 follows 2: nothing lost in between
    assert after(log, 1) is None  # seq 2 is not on the log: the client may have missed it
    assert after([(4, "d"), (6, "f")], 4) is None  # a gap
    assert after([], 7) is None  # the log cannot vouch for seq 7
    assert after([(1, "a")], 0) == [(1, "a")]  # from the start


@given(st.integers(0, 30), st.integers(0, 30), st.integers(0, 30))
def test_after_is_exactly_the_missing_tail_of_a_contiguous_log(first, length, last_seq):
    log = [(s, s) for s in range(first, first + length)]
    result = after(log, last_seq)
    known = first <= last_seq < first + length or (length and last_seq == first - 1)
    if known:
        assert result == [(s, s) for s in range(last_seq + 1, first + length)]
    else:
        assert result is None
