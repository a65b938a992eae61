"""The last two minutes of each topic's deltas, for resumes (within 120 seconds,
missed changes replay; otherwise a fresh snapshot comes first). Pure: the caller passes time.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from typing import Any, Iterable

RESUME_SECONDS = 120.0
MAX_PER_TOPIC = 5_000  # a topic changing faster than this in two minutes resumes with a snapshot
MAX_TOPICS = 100_000  # least recently changed topics are forgotten first


class RecentDeltas:
    def __init__(self, seconds: float = RESUME_SECONDS, per_topic: int = MAX_PER_TOPIC, topics: int = MAX_TOPICS):
        self._seconds = seconds
        self._per_topic = per_topic
        self._topics = topics
        self._by_topic: OrderedDict[str, deque[tuple[int, float, Any]]] = OrderedDict()

    def add(self, topic: str, seq: int, payload: Any, now: float) -> None:
        entries = self._by_topic.get(topic)
        if entries is None:
            entries = self._by_topic[topic] = deque(maxlen=self._per_topic)
            while len(self._by_topic) > self._topics:
                self._by_topic.popitem(last=False)
        else:
            self._by_topic.move_to_end(topic)
            if entries and seq <= entries[-1][0]:
                return  # a redelivered delta: the first copy stands
        entries.append((seq, now, payload))

    def since(self, topic: str, last_seq: int, now: float) -> list[tuple[int, Any]] | None:
        """The deltas after `last_seq`, provided this process saw every one of them and saw
        `last_seq` itself within the window; None when a resume needs a snapshot instead."""
        entries = self._by_topic.get(topic)
        if not entries:
            return None
        oldest_kept = now - self._seconds
        while entries and entries[0][1] < oldest_kept:
            entries.popleft()
        return after(((seq, payload) for seq, _, payload in entries), last_seq)


def after(entries: Iterable[tuple[int, Any]], last_seq: int) -> list[tuple[int, Any]] | None:
    """From one topic's deltas in log order, those after `last_seq` when they are complete: each
    seq the previous plus 1 from `last_seq` + 1, and either some found or `last_seq` itself seen
    (so the client is known to be current). None when a snapshot is needed instead. A repeated
    seq (an exact duplicate on the log, adjacent or resent later) counts once."""
    out: list[tuple[int, Any]] = []
    seen_last = False
    expected = last_seq + 1
    for seq, payload in entries:
        if seq == last_seq:
            seen_last = True
        elif seq > last_seq:
            if seq < expected:
                continue  # a duplicate of one taken (a producer's resend after a crash)
            if seq != expected:
                return None  # a gap: some are missing here
            out.append((seq, payload))
            expected += 1
    return out if out or seen_last else None


def next_step(current: int, seq: int) -> str:
    """What a connection that has shown `current` does with a delta of `seq` (the gap
    rule): `skip` what its snapshot or an earlier delta covered, `send` the next one, and on
    any jump `resnapshot`."""
    if seq <= current:
        return "skip"
    return "send" if seq == current + 1 else "resnapshot"
