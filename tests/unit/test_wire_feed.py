"""`feed` messages (wire/feed.py): a client hears of a change in a topic's expected latency or
liveness, once, and of nothing else."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import given, strategies as st

from wire.feed import FeedBook, Fresh
from wire.messages import encode

T0 = datetime(2026, 11, 23, 12, 0, tzinfo=timezone.utc)
GAME = "game:gm_x"
MARKET = "market:mkt_x"


def s(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_a_quiet_live_topic_turns_stale_once_and_a_change_makes_it_live_again():
    book = FeedBook()
    said = book.watch(MARKET, Fresh(30_000, "The Odds API", s(0)), s(1))
    assert said.liveness.state == "live" and said.expected_latency.seconds == 30
    assert book.next_at() == s(30) + timedelta(milliseconds=1)
    assert book.due(s(30)) == []  # live up to and including the limit
    due = book.due(s(30.001))
    assert due == [MARKET]
    feeds = book.recheck({}, due, s(30.001))  # nothing read: time alone decides
    assert [(f.topic, f.liveness.state, f.liveness.as_of) for f in feeds] == [(MARKET, "stale", s(0))]
    # stale: checked again a limit later, and nothing to say while the read model agrees
    assert book.next_at() == s(60.001)
    assert book.recheck({MARKET: Fresh(30_000, "The Odds API", s(0))}, book.due(s(61)), s(61)) == []
    # a delta with a recent change: live again, and said so
    feed = book.on_delta(MARKET, s(60), "The Odds API", s(61))
    assert feed is not None and feed.liveness.state == "live" and feed.liveness.as_of == s(60)


def test_deltas_that_change_nothing_the_client_acts_on_say_nothing():
    book = FeedBook()
    book.watch(MARKET, Fresh(30_000, "The Odds API", s(0)), s(0))
    for i in range(1, 20):  # newer as_of each time, still live: no feed
        assert book.on_delta(MARKET, s(i), "The Odds API", s(i)) is None
    assert book.next_at() == s(49) + timedelta(milliseconds=1)
    # an old event (a late feed record) never moves as_of back
    assert book.on_delta(MARKET, s(-500), "The Odds API", s(20)) is None
    assert book.next_at() == s(49) + timedelta(milliseconds=1)


def test_a_game_status_sets_the_latency_and_a_final_game_is_settled():
    book = FeedBook()
    book.watch(GAME, Fresh(300_000, "nflverse", s(0)), s(0))
    live = book.on_delta(GAME, s(5), "sandbox", s(5), stale_after_ms=15_000)
    assert live is not None
    assert (live.expected_latency.seconds, live.expected_latency.source, live.liveness.state) == (15, "sandbox", "live")
    final = book.on_delta(GAME, s(6), "sandbox", s(6), stale_after_ms=None)
    assert final is not None and final.liveness.state == "settled"
    assert final.expected_latency.seconds is None and final.liveness.limit_seconds is None
    assert book.next_at() is None  # settled: nothing more to watch
    wire = encode(final)
    assert wire.startswith(b'{"op":"feed","topic":"game:gm_x"')


def test_a_market_settles_with_its_game_by_what_the_read_model_says():
    book = FeedBook()
    book.watch(MARKET, Fresh(30_000, "The Odds API", s(0)), s(0))
    due = book.due(s(31))
    feeds = book.recheck({MARKET: Fresh(None, "The Odds API", s(0))}, due, s(31))
    assert [(f.liveness.state, f.expected_latency.seconds) for f in feeds] == [("settled", None)]


def test_forgotten_topics_and_unknown_topics_say_nothing():
    book = FeedBook()
    book.watch(MARKET, Fresh(30_000, "x", s(0)), s(0))
    book.forget(MARKET)
    assert book.next_at() is None
    assert book.on_delta(MARKET, s(100), "x", s(100)) is None
    assert book.recheck({}, [MARKET], s(100)) == []


@given(st.lists(st.tuples(st.integers(0, 120), st.integers(0, 120), st.sampled_from([15_000, 30_000, None])),
                max_size=30))
def test_every_feed_is_a_change_and_matches_what_is_known(steps):
    """Whatever the deltas and the clock: a feed is sent exactly when what the client can act on
    differs from what it was last told, and then says the current values."""
    book = FeedBook()
    book.watch(GAME, Fresh(300_000, "src", s(0)), s(0))
    told = ("live", 300.0)
    now, newest = s(0), s(0)
    for change_at, advance, limit in steps:
        now = now + timedelta(seconds=advance)
        source_ts = s(change_at)
        newest = max(newest, source_ts)
        feed = book.on_delta(GAME, source_ts, "src", now, stale_after_ms=limit)
        seconds = None if limit is None else limit / 1000
        if limit is None:
            state = "settled"
        else:
            state = "live" if (now - newest).total_seconds() <= seconds else "stale"
        if (state, seconds) != told:
            assert feed is not None
            assert (feed.liveness.state, feed.expected_latency.seconds, feed.liveness.as_of) == (state, seconds, newest)
        else:
            assert feed is None
        told = (state, seconds)


_ops = st.lists(st.tuples(st.sampled_from(["watch", "delta", "forget", "tick"]), st.sampled_from("abcd"),
                          st.integers(0, 200), st.sampled_from([15_000, 30_000, None])), max_size=60)


@given(_ops)
def test_the_queue_always_names_the_earliest_recheck(ops):
    """Whatever the order of snapshots, deltas, forgotten topics and clock ticks: `next_at` is the
    earliest recheck time of any watched topic, and `due` hands out exactly the topics due."""
    book = FeedBook()
    now = s(0)
    for op, topic, n, limit in ops:
        if op == "watch":
            book.watch(topic, Fresh(limit, "src", s(n - 100)), now)
        elif op == "delta":
            book.on_delta(topic, s(n - 100), "src", now, stale_after_ms=limit)
        elif op == "forget":
            book.forget(topic)
        else:
            now = now + timedelta(seconds=n / 4)
            expected_due = sorted(t for t, w in book._watches.items()
                                  if w.recheck_at is not None and w.recheck_at <= now)
            due = book.due(now)
            assert sorted(due) == expected_due
            book.recheck({}, due, now)
        times = [w.recheck_at for w in book._watches.values() if w.recheck_at is not None]
        assert book.next_at() == (min(times) if times else None)
