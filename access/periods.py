"""Credit periods: the key-less UTC day and the account billing month. Pure.

A billing month starts on the account's anchor day (the day of the month it was created) at
00:00 UTC. In a month without that day (anchor 31 in April, 29-31 in February) it starts on the
month's last day, so every period is one calendar month long give or take those days.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone


@dataclass(frozen=True)
class Period:
    label: str  # `dYYYYMMDD` or `mYYYYMMDD`: the first day of the period
    start: datetime
    end: datetime  # exclusive: the next period's start
    start_ts: float = field(init=False, repr=False, compare=False)
    end_ts: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # read on every metered response: computed once
        object.__setattr__(self, "start_ts", self.start.timestamp())
        object.__setattr__(self, "end_ts", self.end.timestamp())

    @property
    def reset(self) -> int:
        return int(self.end_ts)

    @property
    def seconds(self) -> int:
        return int(self.end_ts - self.start_ts)


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time(0), tzinfo=timezone.utc)


def day_period(now: datetime) -> Period:
    day = now.astimezone(timezone.utc).date()
    return Period(f"d{day:%Y%m%d}", _midnight(day), _midnight(day + timedelta(days=1)))


def _anchor_in(year: int, month: int, anchor_day: int) -> date:
    return date(year, month, min(anchor_day, calendar.monthrange(year, month)[1]))


def _add_months(year: int, month: int, n: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + n
    return index // 12, index % 12 + 1


def billing_period(now: datetime, anchor_day: int) -> Period:
    if not 1 <= anchor_day <= 31:
        raise ValueError(f"anchor day {anchor_day} is not a day of the month")
    today = now.astimezone(timezone.utc).date()
    year, month = today.year, today.month
    if today < _anchor_in(year, month, anchor_day):
        year, month = _add_months(year, month, -1)
    start = _anchor_in(year, month, anchor_day)
    end = _anchor_in(*_add_months(year, month, 1), anchor_day)
    return Period(f"m{start:%Y%m%d}", _midnight(start), _midnight(end))
