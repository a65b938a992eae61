"""What a run reports: the counts the CLI prints (`--json`: exactly the six public keys)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

PUBLIC = ("records", "dead_lettered", "events", "accepted", "duplicate", "events_per_second")


@dataclass
class Summary:
    records: int = 0  # source records read (CSV rows, API events, export lines)
    dead_lettered: int = 0  # dead letters written (a whole record, or one part such as a book's market)
    events: int = 0  # distinct events the records produced (== accepted + duplicate)
    accepted: int = 0  # appended to the log now
    duplicate: int = 0  # already in the log (same event_id, same log epoch)
    events_per_second: float = 0.0
    seconds: float = 0.0
    by_type: Counter = field(default_factory=Counter)  # events per event type
    reasons: Counter = field(default_factory=Counter)  # dead letters per reason (numbers folded)

    def public(self) -> dict:
        return {k: getattr(self, k) for k in PUBLIC}

    def add(self, other: Summary) -> None:
        for k in ("records", "dead_lettered", "events", "accepted", "duplicate", "seconds"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.by_type.update(other.by_type)
        self.reasons.update(other.reasons)
        self.events_per_second = round(self.events / self.seconds, 1) if self.seconds else 0.0
