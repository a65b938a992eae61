"""Credit periods: the UTC day for key-less callers, the billing month from an anchor day."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from access.periods import billing_period, day_period

UTC = timezone.utc


def at(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


def test_day_period():
    p = day_period(at(2026, 11, 22, 23, 59, 59))
    assert (p.label, p.start, p.end, p.seconds) == ("d20261122", at(2026, 11, 22), at(2026, 11, 23), 86400)
    assert p.reset == int(at(2026, 11, 23).timestamp())
    # a non-UTC clock is read in UTC
    assert day_period(datetime(2026, 11, 22, 20, 0, tzinfo=timezone(timedelta(hours=-5)))).label == "d20261123"


def test_billing_month_starts_on_the_anchor_day():
    p = billing_period(at(2026, 11, 22, 4), anchor_day=15)
    assert (p.label, p.start, p.end) == ("m20261115", at(2026, 11, 15), at(2026, 12, 15))
    p = billing_period(at(2026, 11, 14, 23, 59), anchor_day=15)
    assert (p.label, p.end) == ("m20261015", at(2026, 11, 15))


def test_short_months_clamp_the_anchor():
    assert billing_period(at(2026, 2, 28, 12), 31).label == "m20260228"
    assert billing_period(at(2026, 2, 27, 12), 31).label == "m20260131"
    assert billing_period(at(2026, 2, 28, 12), 31).end == at(2026, 3, 31)
    assert billing_period(at(2028, 2, 29), 30).label == "m20280229"  # leap year
    assert billing_period(at(2026, 4, 30), 31).label == "m20260430"
    assert billing_period(at(2026, 12, 31), 31).end == at(2027, 1, 31)


@given(st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)),
       st.integers(min_value=1, max_value=31))
def test_billing_periods_cover_time_without_gaps(now, anchor):
    p = billing_period(now, anchor)
    assert p.start <= now < p.end
    assert p.label == f"m{p.start:%Y%m%d}"
    assert 28 * 86400 <= p.seconds <= 31 * 86400
    assert billing_period(p.end, anchor).start == p.end  # the next period starts where this one ends
    assert billing_period(p.start - timedelta(microseconds=1), anchor).end == p.start
