"""The bookmaker registry (issue 20 item 4): every Odds API key in the samples has a kind, and no
exchange or DFS price is ever a consensus input (Betfair's back prices were among the 19 books
of the Bills@Rams 2022 h2h consensus)."""

from __future__ import annotations

import json
from datetime import date

from projections.consensus import consensus_inputs, eligible_quotes
from projections.state import GameState
from schemas.bookmakers import NOT_CONSENSUS_INPUTS, PUBLISHED_LINES, REGISTRY, kind_of
from schemas.natural_keys import game_id, market_id, team_id
from tests.support.sample_fold import SAMPLES
from tests.support.sample_fold import WINDOW_US, sample_states


def odds_api_files():
    for path in sorted((SAMPLES / "oddsapi").glob("*.json")):
        data = json.loads(path.read_text())
        yield path.name, data if isinstance(data, list) else data["data"]


def test_every_bookmaker_key_in_the_samples_is_registered_with_its_kind():
    keys = {b["key"] for _, events in odds_api_files() for e in events for b in e["bookmakers"]}
    assert len(keys) == 29
    assert keys <= set(REGISTRY)
    # the books that quote lay prices are exchanges, and only they
    lay = {b["key"] for _, events in odds_api_files() for e in events for b in e["bookmakers"]
           if any(m["key"] == "h2h_lay" for m in b["markets"])}
    assert lay == {"betfair", "matchbook"} == {k for k in keys if kind_of(k) == "exchange"}
    assert kind_of("nflverse") == "published_line" and kind_of("sim_north") == "sportsbook"


def test_no_exchange_or_dfs_price_in_any_consensus_of_the_samples():
    checked = 0
    for state in sample_states().values():
        if not isinstance(state, GameState):
            continue
        for m in state.markets.values():
            for line in m.lines.values():
                if line.consensus is None:
                    continue
                basis, books, inputs = consensus_inputs(
                    eligible_quotes(line.books, m.suspend_all, m.suspend_book, WINDOW_US))
                assert not {q.book for q in inputs} & NOT_CONSENSUS_INPUTS
                assert books == line.consensus.books == len([q for q in inputs if q.book not in PUBLISHED_LINES]) \
                    or basis == "published_line"
                checked += 1
    assert checked > 2500


def test_bills_at_rams_2022_h2h_consensus_leaves_the_exchanges_out():
    (events,) = [events for name, events in odds_api_files() if name.startswith("nfl_2022")]
    event = next(e for e in events if e["home_team"] == "Los Angeles Rams" and e["away_team"] == "Buffalo Bills")
    quoting = {b["key"] for b in event["bookmakers"] if any(m["key"] == "h2h" for m in b["markets"])}
    assert "betfair" in quoting  # its back prices are in the file, as h2h
    gid = game_id("nfl", team_id("nfl", "LA"), team_id("nfl", "BUF"), date(2022, 9, 8))
    m = sample_states()[gid].markets[market_id(gid, "game", "h2h", "full", None)]
    line = m.lines[m.main_key]
    assert line.consensus.basis == "consensus"
    assert line.consensus.books == len(quoting - {"betfair", "matchbook"}) == 18
