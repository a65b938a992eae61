"""`feed` messages: tell a client when a topic's `expected_latency` or `liveness`
changed from what its snapshot (or the last `feed`) said. Pure: the caller passes time and
what it read.

A change is one the client can act on: the expected latency (seconds, basis, source), or the
liveness state or its limit. A newer `liveness.as_of` alone is no change: every delta carries
its own time. Three things move a topic:

- a delta: its `source_ts` is the topic's newest change (a stale topic is live again), and a
  game's status sets its latency (a final game is settled);
- time: a live topic with no change within its limit turns stale;
- its read model: a market is settled when its game is, which no market delta says; so a topic
  whose state could change without a delta is re-read from the read models (all due topics of
  a connection in one read) when it turns stale and every `limit` after that.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import EllipsisType

from ingest.memo import remember
from schemas.wire import ExpectedLatency, Liveness
from wire.messages import Feed
from wire.snapshots import freshness

_JUST_AFTER = timedelta(milliseconds=1)  # `live` holds up to and including the limit


@dataclass(frozen=True)
class Fresh:
    """What a topic's freshness follows from: its latency hint (None once settled), source and
    newest change."""

    stale_after_ms: int | None
    source: str
    as_of: datetime


def _told(expected: ExpectedLatency, liveness: Liveness) -> tuple:
    return (expected, liveness.state, liveness.limit_seconds)


# What a topic was last said to be is the same for every connection that heard it (the same
# snapshot's values, the same change), so the watches of all the connections share one copy, and
# one of the `Fresh` it follows from (each connection reads its own from the read models): they
# were ~400 bytes per topic per connection, kept while it is idle (two structs, two tuples, the
# Fresh; tests/unit/test_wire_idle_bytes.py; docs/benchmarks.md, "Wire fan-out: what an idle
# socket holds"). All frozen. Keyed by value; bounded as every memo of pure results is. Shared
# where a watch is made or what it tells changes, not on every delta's quiet update (a lookup
# per delta per socket for ~100 bytes).
_SAID: dict[tuple, tuple] = {}
_FRESH: dict[Fresh, Fresh] = {}
SAID_LIMIT = 4096


def _one(fresh: Fresh) -> Fresh:
    """The shared copy of `fresh`."""
    shared = _FRESH.get(fresh)
    return shared if shared is not None else remember(_FRESH, fresh, fresh, SAID_LIMIT)


def _saying(fresh: Fresh, now: datetime) -> tuple[tuple[ExpectedLatency, Liveness], tuple]:
    """`freshness` of `fresh` at `now` and what it tells (`_told`), one shared copy per value."""
    said = freshness(fresh.stale_after_ms, fresh.source, fresh.as_of, now)
    shared = _SAID.get(said)
    return shared if shared is not None else remember(_SAID, said, (said, _told(*said)), SAID_LIMIT)


class FeedWatch:
    """One topic of one connection: what it was last told, and when that stops holding."""

    __slots__ = ("topic", "fresh", "said", "told", "recheck_at")

    def __init__(self, topic: str, fresh: Fresh, now: datetime) -> None:
        self.topic = topic
        self.fresh = fresh = _one(fresh)
        self.said, self.told = _saying(fresh, now)
        self.recheck_at: datetime | None = None
        self._plan(now)

    def feed(self) -> Feed:
        return Feed(topic=self.topic, expected_latency=self.said[0], liveness=self.said[1])

    def _plan(self, now: datetime) -> None:
        limit = self.fresh.stale_after_ms
        if limit is None:  # settled: nothing more will change
            self.recheck_at = None
        elif self.told[1] == "live":  # turns stale just after as_of + limit
            self.recheck_at = self.fresh.as_of + timedelta(milliseconds=limit) + _JUST_AFTER
        else:  # stale: settled or live again only by what the read model says
            self.recheck_at = now + timedelta(milliseconds=limit)

    def update(self, fresh: Fresh, now: datetime) -> Feed | None:
        """Take what is known now (never moving `as_of` back); a `feed` if the client must hear it."""
        if fresh.as_of < self.fresh.as_of:
            fresh = Fresh(fresh.stale_after_ms, fresh.source, self.fresh.as_of)
        limit = fresh.stale_after_ms
        if limit == self.fresh.stale_after_ms and fresh.source == self.fresh.source:
            # what was told depends only on the limit, the source and the state: with the first
            # two unchanged, a state unchanged is no change (the common case, every delta of a
            # live topic), told without building the messages; `said` is rebuilt when one is due
            state = "settled" if limit is None else "live" if (now - fresh.as_of).total_seconds() <= limit / 1000 \
                else "stale"
            if state == self.told[1]:
                self.fresh = fresh
                self._plan(now)
                return None
        self.fresh = fresh = _one(fresh)
        self.said, told = _saying(fresh, now)
        changed = told != self.told
        self.told = told
        self._plan(now)
        return self.feed() if changed else None


class FeedBook:
    """The watches of one connection's topics, with the next recheck found in O(log n): a heap of
    (time, topic) holding, per topic, its earliest queued time; entries whose watch moved are
    re-queued or dropped when they reach the top (a delta moves a live topic's time each time)."""

    def __init__(self) -> None:
        self._watches: dict[str, FeedWatch] = {}
        self._heap: list[tuple[datetime, str]] = []
        self._queued: dict[str, datetime] = {}  # topic -> its earliest time in the heap

    def _schedule(self, w: FeedWatch) -> None:
        at = w.recheck_at
        if at is None:
            return
        queued = self._queued.get(w.topic)
        if queued is None or at < queued:  # later times are re-queued when the earlier one surfaces
            self._queued[w.topic] = at
            heapq.heappush(self._heap, (at, w.topic))

    def _top(self) -> tuple[datetime, str] | None:
        """The earliest entry that is still a watch's recheck time."""
        heap = self._heap
        while heap:
            at, topic = heap[0]
            if self._queued.get(topic) != at:  # superseded by an earlier entry, or forgotten
                heapq.heappop(heap)
                continue
            w = self._watches.get(topic)
            if w is None or w.recheck_at is None:
                heapq.heappop(heap)
                del self._queued[topic]
                continue
            if w.recheck_at != at:  # moved on: queue it at its time now
                heapq.heappop(heap)
                del self._queued[topic]
                self._schedule(w)
                continue
            return at, topic
        return None

    def watch(self, topic: str, fresh: Fresh, now: datetime) -> Feed:
        """Watch a topic from what the client was just told (a snapshot's values, or the
        returned `feed` for a client whose knowledge is unknown, as after a resume)."""
        w = self._watches[topic] = FeedWatch(topic, fresh, now)
        self._schedule(w)
        return w.feed()

    def forget(self, topic: str) -> None:
        self._watches.pop(topic, None)
        self._queued.pop(topic, None)

    def on_delta(self, topic: str, source_ts: datetime | None, source: str, now: datetime,
                 stale_after_ms: int | None | EllipsisType = ...) -> Feed | None:
        """A delta was sent; `stale_after_ms` when it says the latency (a game's status; `...`
        when it does not say)."""
        w = self._watches.get(topic)
        if w is None:
            return None
        limit = w.fresh.stale_after_ms if stale_after_ms is ... else stale_after_ms
        as_of = w.fresh.as_of if source_ts is None else max(source_ts, w.fresh.as_of)
        feed = w.update(Fresh(limit, source, as_of), now)
        self._schedule(w)
        return feed

    def next_at(self) -> datetime | None:
        top = self._top()
        return None if top is None else top[0]

    def due(self, now: datetime) -> list[str]:
        """The topics due a recheck (taken off the queue: `recheck` queues them again)."""
        out = []
        while (top := self._top()) is not None and top[0] <= now:
            heapq.heappop(self._heap)
            del self._queued[top[1]]
            out.append(top[1])
        return out

    def recheck(self, read: dict[str, Fresh], due: list[str], now: datetime) -> list[Feed]:
        """Apply what the read models say of the due topics (a topic not read keeps its own
        values, and time alone decides)."""
        out = []
        for topic in due:
            w = self._watches.get(topic)
            if w is None:
                continue
            feed = w.update(read.get(topic, w.fresh), now)
            self._schedule(w)
            if feed is not None:
                out.append(feed)
        return out
