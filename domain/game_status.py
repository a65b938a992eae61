"""A game's served status: the one rule the REST API and the Wire apply to a game's stored status.

The read model keeps what the sources said. A game no source has reported on since its schedule
is stored `scheduled`; it is served `scheduled` while its start is still to come and
`result_unknown` once it has passed (nobody told us it started, ended or was called off). A game
with only a date has passed once that date is over everywhere (its next day at 12:00 UTC: the end
of the date at UTC-12), which needs no time zone, so a delta's data decides it as the database does.

The rule in two forms, side by side because the two readers need both: SQL for the queries that
list, filter and snapshot games (`served_status_sql`, `started_sql`), Python for the Wire's
game deltas (`served_status`). tests/integration/test_game_status.py holds them equal.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta, timezone

RESULT_UNKNOWN = "result_unknown"
DATE_ENDS_AFTER = timedelta(days=1, hours=12)  # a date's 00:00 UTC to its end at UTC-12

_STARTED_SQL = (
    "coalesce({g}.kickoff_at, ({g}.kickoff_date::timestamp + interval '1 day 12 hours') AT TIME ZONE 'UTC') <= {now}"
)


def started_sql(alias: str = "g", now: str = "now()") -> str:
    """SQL: the game `alias` has started by `now` (a date-only game: its date is over)."""
    return _STARTED_SQL.format(g=alias, now=now)


def served_status_sql(alias: str = "g", now: str = "now()") -> str:
    """SQL: the served status of the game `alias`."""
    return f"CASE WHEN {alias}.status = 'scheduled' AND {started_sql(alias, now)} THEN '{RESULT_UNKNOWN}' ELSE {alias}.status END"


def started(kickoff_at: datetime | None, kickoff_date: date | str | None, now: datetime) -> bool:
    if kickoff_at is not None:
        return kickoff_at <= now
    if kickoff_date is None:
        return False  # no time and no day: nothing says it has come (SQL: coalesce of nulls)
    day = date.fromisoformat(kickoff_date) if isinstance(kickoff_date, str) else kickoff_date
    return datetime.combine(day, time(0), timezone.utc) + DATE_ENDS_AFTER <= now


def served_status(status: str, kickoff_at: datetime | None, kickoff_date: date | str | None, now: datetime) -> str:
    """The served status of a game stored as `status` with this kickoff, at `now`."""
    if status == "scheduled" and started(kickoff_at, kickoff_date, now):
        return RESULT_UNKNOWN
    return status
