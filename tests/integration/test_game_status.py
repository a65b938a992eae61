"""A game's served status has one rule in two forms (domain.game_status): the SQL the REST
queries and Wire snapshots read with, and the Python the Wire's game deltas are served with.
Both give the same status for the same game at the same instant, on every side of the edges."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

from infra.db import connect
from domain.game_status import served_status, served_status_sql

NOW = datetime(2026, 3, 1, 18, 0, tzinfo=timezone.utc)
US = timedelta(microseconds=1)
CASES = [
    # (stored status, kickoff_at, kickoff_date)
    ("scheduled", NOW + US, None),  # still to come
    ("scheduled", NOW, None),  # kicked off this instant
    ("scheduled", NOW - timedelta(days=900), None),
    ("final", NOW - timedelta(days=900), None),  # a reported status is served as reported
    ("live", NOW + timedelta(hours=1), None),
    ("postponed", NOW - timedelta(days=2), None),
    ("scheduled", None, date(2026, 3, 1)),  # today: not over anywhere yet
    ("scheduled", None, date(2026, 2, 28)),  # yesterday: over at UTC-12 too by 12:00 UTC today
    ("scheduled", None, date(2026, 2, 27)),
    ("scheduled", None, date(2026, 3, 2)),
    ("cancelled", None, date(2020, 1, 1)),
]


async def test_the_sql_and_the_python_rule_agree(database_url):
    conn = await connect(database_url)
    try:
        for at in (NOW, datetime(2026, 3, 2, 12, 0, tzinfo=timezone.utc) - US, datetime(2026, 3, 2, 12, 0, tzinfo=timezone.utc)):
            rows = await conn.fetch(
                f"SELECT {served_status_sql('g', '$4')} AS served FROM "
                "unnest($1::text[], $2::timestamptz[], $3::date[]) AS g(status, kickoff_at, kickoff_date)",
                [c[0] for c in CASES], [c[1] for c in CASES], [c[2] for c in CASES], at,
            )
            assert [r["served"] for r in rows] == [served_status(*c, at) for c in CASES], at
            assert [served_status(c[0], c[1], c[2] and c[2].isoformat(), at) for c in CASES] == [r["served"] for r in rows]
    finally:
        await conn.close()
    assert [served_status(*c, NOW) for c in CASES] == [
        "scheduled", "result_unknown", "result_unknown", "final", "live", "postponed",
        "scheduled", "result_unknown", "result_unknown", "scheduled", "cancelled",
    ]
    # a date is over once it has ended at UTC-12: the next day at 12:00 UTC
    edge = datetime(2026, 3, 2, 12, 0, tzinfo=timezone.utc)
    assert served_status("scheduled", None, "2026-03-01", edge - US) == "scheduled"
    assert served_status("scheduled", None, "2026-03-01", edge) == "result_unknown"
