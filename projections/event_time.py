"""Event time as integers: the projector orders and compares by the log's own clock only.

A `Stamp` is (source_ts in epoch microseconds, event_id). Among facts about the same thing the
greatest stamp wins; the event_id tie-break makes the winner a function of the *set* of events,
so duplicates and redeliveries in any order give the same state.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from typing import Final

Stamp = tuple[int, str]
UTC = timezone.utc
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)  # Final: compiled, a constant, not a globals lookup
_ONE_US = timedelta(microseconds=1)
NO_STAMP: Stamp = (-(1 << 62), "")


def to_us(value: datetime) -> int:
    """Epoch microseconds of an aware datetime (naive ones are taken as UTC)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_us(us: int) -> datetime:
    return _EPOCH + _ONE_US * us


def opt_us(value: datetime | None) -> int | None:
    return None if value is None else to_us(value)


def opt_dt(us: int | None) -> datetime | None:
    return None if us is None else from_us(us)


def iso_date(value: date | None) -> str | None:
    return None if value is None else value.isoformat()
