"""The main line (issue 20 item 3): ties in book count go to the newest quotes, and a line whose
quotes are outside the staleness window of the market's newest never decides it."""

from __future__ import annotations

import csv
from datetime import date
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from projections.reducers import reduce
from schemas.natural_keys import game_id, market_id, team_id
from tests.support import projection_events as ev
from tests.support.sample_fold import SAMPLES
from tests.support.sample_fold import WINDOW_US, sample_states

KC, DET = team_id("nfl", "KC"), team_id("nfl", "DET")


def test_det_at_kc_2023_week_1_closing_spread_is_main_not_the_preseason_quote():
    with open(SAMPLES / "nflverse" / "games_2023_2025.csv", newline="") as f:
        row = next(r for r in csv.DictReader(f) if r["game_id"] == "2023_01_DET_KC")
    gid = game_id("nfl", KC, DET, date(2023, 9, 7))
    game = sample_states()[gid]
    spreads = game.markets[market_id(gid, "game", "spreads", "full", None)]
    points = {line.point: line for line in spreads.lines.values()}
    # two lines of one source each: DraftKings' -6.5 of 2023-08-18 (The Odds API; one bookmaker, so
    # not served) and the closing line at kickoff (nflverse spread_line 4.0: the home side is
    # favoured by 4, so KC -4.0; nflverse's published line)
    assert set(points) == {Decimal("-6.5"), -Decimal(row["spread_line"])}
    assert (points[Decimal("-6.5")].consensus.books, points[Decimal("-6.5")].consensus.basis) == (1, "too_few_books")
    assert points[Decimal("-4.0")].consensus.basis == "published_line"
    assert spreads.lines[spreads.main_key].point == Decimal("-4.0")


MINUTE = 60_000_000


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 3), st.integers(1, 3), st.booleans())
def test_ties_go_to_the_newest_quotes_and_stale_lines_never_decide(stale_books, fresh_books, fresh_first):
    gid = ev.game().game_id
    old = [ev.quote(gid, f"old{i}", [-110, -110], market_type="spreads", point="-6.5", minute=0)
           for i in range(stale_books)]
    # fresh quotes 20 days later: the old ones are far outside the window of the newest
    new = [ev.quote(gid, f"new{i}", [-110, -110], market_type="spreads", point="-4.0", minute=20 * 24 * 60)
           for i in range(fresh_books)]
    state = None
    for e in (new + old if fresh_first else old + new):
        state, _ = reduce(state, e, WINDOW_US)
    (m,) = state.markets.values()
    assert m.lines[m.main_key].point == Decimal("-4.0")


def test_a_tie_within_the_window_goes_to_the_newer_line():
    gid = ev.game().game_id
    state = None
    for e in (ev.quote(gid, "a", [-110, -110], market_type="spreads", point="-3.5", minute=0),
              ev.quote(gid, "b", [-110, -110], market_type="spreads", point="-3.0", minute=5)):
        state, _ = reduce(state, e, WINDOW_US)
    (m,) = state.markets.values()
    assert m.lines[m.main_key].point == Decimal("-3.0")
