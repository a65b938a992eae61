"""`feed` messages (spec 6.1): tell a client when a topic's `expected_latency` or `liveness`
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

from dataclasses import dataclass
from datetime import datetime, timedelta

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


class FeedWatch:
    """One topic of one connection: what it was last told, and when that stops holding."""

    __slots__ = ("topic", "fresh", "told", "recheck_at")

    def __init__(self, topic: str, fresh: Fresh, now: datetime) -> None:
        self.topic = topic
        self.fresh = fresh
        self.told = _told(*freshness(fresh.stale_after_ms, fresh.source, fresh.as_of, now))
        self.recheck_at: datetime | None = None
        self._plan(now)

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
        self.fresh = fresh
        expected, liveness = freshness(fresh.stale_after_ms, fresh.source, fresh.as_of, now)
        told = _told(expected, liveness)
        changed = told != self.told
        self.told = told
        self._plan(now)
        return Feed(topic=self.topic, expected_latency=expected, liveness=liveness) if changed else None


class FeedBook:
    """The watches of one connection's topics."""

    def __init__(self) -> None:
        self._watches: dict[str, FeedWatch] = {}

    def watch(self, topic: str, fresh: Fresh, now: datetime) -> Feed:
        """Watch a topic from what the client was just told (a snapshot's values, or the
        returned `feed` for a client whose knowledge is unknown, as after a resume)."""
        self._watches[topic] = FeedWatch(topic, fresh, now)
        expected, liveness = freshness(fresh.stale_after_ms, fresh.source, fresh.as_of, now)
        return Feed(topic=topic, expected_latency=expected, liveness=liveness)

    def forget(self, topic: str) -> None:
        self._watches.pop(topic, None)

    def on_delta(self, topic: str, source_ts: datetime | None, source: str, now: datetime,
                 stale_after_ms: int | None | type = ...) -> Feed | None:
        """A delta was sent; `stale_after_ms` when it says the latency (a game's status)."""
        w = self._watches.get(topic)
        if w is None:
            return None
        limit = w.fresh.stale_after_ms if stale_after_ms is ... else stale_after_ms
        as_of = w.fresh.as_of if source_ts is None else max(source_ts, w.fresh.as_of)
        return w.update(Fresh(limit, source, as_of), now)

    def next_at(self) -> datetime | None:
        times = [w.recheck_at for w in self._watches.values() if w.recheck_at is not None]
        return min(times) if times else None

    def due(self, now: datetime) -> list[str]:
        return [t for t, w in self._watches.items() if w.recheck_at is not None and w.recheck_at <= now]

    def recheck(self, read: dict[str, Fresh], due: list[str], now: datetime) -> list[Feed]:
        """Apply what the read models say of the due topics (a topic not read keeps its own
        values, and time alone decides)."""
        out = []
        for topic in due:
            w = self._watches.get(topic)
            if w is None:
                continue
            feed = w.update(read.get(topic, w.fresh), now)
            if feed is not None:
                out.append(feed)
        return out
