"""Season dates (issue 20 item 6): from the sourced table, or null; never from the games loaded."""

from __future__ import annotations

from projections.rows import season_ids
from schemas.season_dates import SEASONS


def test_season_dates_come_from_the_table_or_are_null():
    rows = {r[1:3]: r for r in season_ids({("nfl", "2023"), ("nfl", "1999"), ("epl", "2024-25")})}
    assert rows[("nfl", "2023")][4:6] == (SEASONS[("nfl", "2023")].starts_on, SEASONS[("nfl", "2023")].ends_on)
    assert rows[("nfl", "1999")][4:] == (None, None, None)  # no source states it here: null, never guessed
    assert all(s.starts_on < s.ends_on and s.source for s in SEASONS.values())
