"""The Odds API v4 adapter on the real sample responses and on hand-made ones (pure: no log)."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path

import pytest

from ingest import odds_api, prices
from ingest.batches import collect
from ingest.identity import nfl_team, soccer_team
from ingest.records import FormatError
from ingest.resolution import MemoryResolver
from schemas import natural_keys
from schemas.events import GameScheduled, PriceQuoted, TeamRegistered

SAMPLES = Path(__file__).resolve().parents[2] / "ingest" / "samples" / "oddsapi"
NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def run(path: Path, **kw):
    return collect(odds_api.parse(path, NOW, **kw).items, MemoryResolver())


def quotes(c):
    return [e for e in c.events if isinstance(e, PriceQuoted)]


@pytest.mark.parametrize("name, records, events, rejected", [
    ("nfl_2021_h2h_decimal.json", 13, 219, 0),
    ("nfl_2022_h2h_spreads_totals_american.json", 43, 1695, 2),
    ("nfl_2023_draftkings_spreads_american.json", 16, 64, 0),
    ("soccer_epl_2024_h2h_decimal.json", 11, 42, 0),
    ("soccer_serie_a_2021_h2h_decimal.json", 20, 216, 0),
])
def test_sample_files(name, records, events, rejected):
    c = run(SAMPLES / name)
    assert (c.records, len(c.events), len(c.rejected)) == (records, events, rejected)
    assert len({e.event_id for e in c.events}) == len(c.events)


def test_betfair_placeholders_are_dead_lettered_at_their_json_path():
    c = run(SAMPLES / "nfl_2022_h2h_spreads_totals_american.json")
    by_path = {r.location: r for r in c.rejected}
    assert set(by_path) == {"$[4].bookmakers[15].markets[0]", "$[5].bookmakers[15].markets[0]"}
    for r in c.rejected:
        assert r.reason.startswith("betfair: implausible overround")
        raw = json.loads(r.raw)
        assert raw["key"] == "h2h" and -5000 in [o["price"] for o in raw["outcomes"]]
    # only those markets are lost: the same events' other books and markets are kept
    kept = {(q.source_id, q.book, q.market_type) for q in quotes(c)}
    data = json.loads((SAMPLES / "nfl_2022_h2h_spreads_totals_american.json").read_text())
    assert (data[4]["id"], "betfair", "h2h") not in kept and (data[4]["id"], "draftkings", "h2h") in kept


def test_lay_markets_are_exchange_and_keep_their_extreme_prices():
    c = run(SAMPLES / "nfl_2022_h2h_spreads_totals_american.json")
    lay = [q for q in quotes(c) if q.market_type == "h2h_lay"]
    assert lay and {q.kind for q in lay} == {"exchange"} and {q.book for q in lay} <= {"betfair", "matchbook"}
    assert Decimal("10900") in {o.price for q in lay for o in q.outcomes}
    game = lay[0].game_id
    assert lay[0].market_id == natural_keys.market_id(game, "exchange", "h2h_lay", "full", None)
    assert lay[0].market_id != natural_keys.market_id(game, "game", "h2h", "full", None)


def test_outcomes_in_fixed_order_draw_third_and_exact_decimal_digits():
    c = run(SAMPLES / "soccer_epl_2024_h2h_decimal.json")
    q = quotes(c)[0]  # Leicester City (home) v Tottenham: 5.0, 1.6, Draw 4.2
    assert [(o.selection, o.name, str(o.price)) for o in q.outcomes] == [
        ("home", "Leicester City", "5.0"), ("away", "Tottenham Hotspur", "1.6"), ("draw", "Draw", "4.2")]
    assert {o.price_format for o in q.outcomes} == {"decimal"}
    assert q.source_ts == datetime(2024, 8, 19, 8, 26, 2, tzinfo=timezone.utc)  # the market's own last_update
    assert q.outcomes[0].participant_id == soccer_team("epl", "Leicester City").team_id
    serie_a = run(SAMPLES / "soccer_serie_a_2021_h2h_decimal.json")
    integers = [o.price for q in quotes(serie_a) for o in q.outcomes if "." not in str(o.price)]
    assert Decimal("10") in integers and all(str(p) == str(int(p)) for p in integers)


def test_away_listed_first_is_still_away():
    c = run(SAMPLES / "nfl_2021_h2h_decimal.json")
    q = quotes(c)[0]  # listed: Atlanta Falcons (away) 4.1, Dallas Cowboys (home) 1.25
    assert [(o.selection, o.name, str(o.price)) for o in q.outcomes] == [
        ("home", "Dallas Cowboys", "1.25"), ("away", "Atlanta Falcons", "4.1")]


def test_spreads_point_is_the_home_handicap_and_totals_the_total():
    c = run(SAMPLES / "nfl_2022_h2h_spreads_totals_american.json")
    unibet = [q for q in quotes(c) if q.book == "unibet" and q.source_id == "6bde759afa450fe673e70e555be88ba4"]
    spread = next(q for q in unibet if q.market_type == "spreads")
    total = next(q for q in unibet if q.market_type == "totals")
    assert spread.point == Decimal("2.5")  # Rams (home) +2.5
    assert [(o.selection, o.point) for o in spread.outcomes] == [("home", Decimal("2.5")), ("away", Decimal("-2.5"))]
    assert total.point == Decimal("52") and [o.selection for o in total.outcomes] == ["over", "under"]
    assert {o.price_format for o in spread.outcomes} == {"american"}


def test_renamed_team_is_the_same_team_with_the_source_name_kept():
    c = run(SAMPLES / "nfl_2021_h2h_decimal.json")
    wft = next(e for e in c.events if isinstance(e, TeamRegistered) and e.source_id == "Washington Football Team")
    assert wft.team_id == nfl_team("WAS").team_id and wft.name == "Washington Commanders"
    assert "Washington Football Team" in wft.aliases and wft.known_by[0].source_id == "Washington Football Team"


def test_games_created_with_season_and_the_source_id_known():
    c = run(SAMPLES / "soccer_epl_2024_h2h_decimal.json")
    g = next(e for e in c.events if isinstance(e, GameScheduled))
    assert g.competition == "epl" and g.sport == "soccer" and g.season == "2024-25"
    assert g.known_by[0].source == "The Odds API" and g.known_by[0].source_id == "36808dc52374b40df08cab6b1d5664d1"
    assert g.kickoff_at == datetime(2024, 8, 19, 19, 0, tzinfo=timezone.utc)


def event(**over) -> dict:
    e = {
        "id": "e1", "sport_key": "americanfootball_nfl", "commence_time": "2030-09-08T17:00:00Z",
        "home_team": "Kansas City Chiefs", "away_team": "Oakland Raiders",
        "bookmakers": [{"key": "b1", "title": "B1", "last_update": "2030-09-01T12:00:00Z", "markets": [
            {"key": "h2h", "outcomes": [{"name": "Oakland Raiders", "price": 150}, {"name": "Kansas City Chiefs", "price": -170}]},
        ]}],
    }
    e.update(over)
    return e


def write(tmp_path, payload) -> Path:
    path = tmp_path / "odds.json"
    path.write_text(json.dumps(payload))
    return path


def test_historical_wrapper_uses_the_snapshot_time(tmp_path):
    c = run(write(tmp_path, {"timestamp": "2030-09-02T00:00:00Z", "previous_timestamp": None, "data": [event()]}))
    g = next(e for e in c.events if isinstance(e, GameScheduled))
    assert g.source_ts == datetime(2030, 9, 2, tzinfo=timezone.utc)
    assert quotes(c)[0].source_ts == datetime(2030, 9, 1, 12, tzinfo=timezone.utc)
    single = run(write(tmp_path, {"timestamp": "2030-09-02T00:00:00Z", "data": event()}))
    assert single.records == 1 and len(quotes(single)) == 1


def test_bad_parts_are_dead_lettered_and_the_rest_kept(tmp_path):
    book = lambda key, outcomes, **kw: {"key": key, "title": key, "last_update": "2030-09-01T12:00:00Z",  # noqa: E731
                                        "markets": [{"key": kw.get("market", "h2h"), "outcomes": outcomes}]}
    payload = [
        event(bookmakers=[
            book("ok", [{"name": "Kansas City Chiefs", "price": -170}, {"name": "Oakland Raiders", "price": 150}]),
            book("stranger", [{"name": "Kansas City Chiefs", "price": -170}, {"name": "Denver Broncos", "price": 150}]),
            book("oneside", [{"name": "Kansas City Chiefs", "price": -170}]),
            book("badprice", [{"name": "Kansas City Chiefs", "price": -50}, {"name": "Oakland Raiders", "price": 150}]),
            book("prop", [{"name": "Over", "description": "P. Mahomes", "price": -110, "point": 2.5}], market="player_pass_tds"),
            book("pairs", [{"name": "Kansas City Chiefs", "price": -110, "point": -3}, {"name": "Oakland Raiders", "price": -110, "point": 2.5}], market="spreads"),
            {"key": "nokey"},
        ]),
        event(id="e2", sport_key="cricket_ipl"),
        event(id="e3", home_team="Springfield Isotopes"),
        {"id": "e4"},
    ]
    c = run(write(tmp_path, payload))
    reasons = {r.location: r.reason for r in c.rejected}
    assert c.records == 4
    assert "neither team" in reasons["$[0].bookmakers[1].markets[0]"]
    assert "do not make a h2h market" in reasons["$[0].bookmakers[2].markets[0]"]
    assert "between -100 and +100" in reasons["$[0].bookmakers[3].markets[0]"]
    assert "unsupported market 'player_pass_tds'" in reasons["$[0].bookmakers[4].markets[0]"]
    assert "do not pair up" in reasons["$[0].bookmakers[5].markets[0]"]
    assert "invalid bookmaker" in reasons["$[0].bookmakers[6]"]
    assert "unknown sport_key 'cricket_ipl'" in reasons["$[1]"]
    assert "unknown NFL team 'Springfield Isotopes'" in reasons["$[2]"]
    assert "invalid event" in reasons["$[3]"]
    assert [q.book for q in quotes(c)] == ["ok"]
    assert json.loads(c.rejected[0].raw)["outcomes"][1]["name"] == "Denver Broncos"  # verbatim part


def test_alternate_lines_split_into_one_quote_per_point(tmp_path):
    outcomes = [
        {"name": "Kansas City Chiefs", "price": -110, "point": -3.5}, {"name": "Oakland Raiders", "price": -110, "point": 3.5},
        {"name": "Kansas City Chiefs", "price": 120, "point": -6.5}, {"name": "Oakland Raiders", "price": -145, "point": 6.5},
    ]
    payload = [event(bookmakers=[{"key": "b", "title": "B", "last_update": "2030-09-01T12:00:00Z",
                                  "markets": [{"key": "alternate_spreads", "outcomes": outcomes}]}])]
    qs = quotes(run(write(tmp_path, payload)))
    assert [(q.market_type, q.point) for q in qs] == [("spreads", Decimal("-3.5")), ("spreads", Decimal("-6.5"))]
    assert len({q.market_id for q in qs}) == 1  # one market, two lines


def test_price_format_can_be_forced(tmp_path):
    three_way = [{"name": "Arsenal", "price": 150}, {"name": "Chelsea", "price": 220}, {"name": "Draw", "price": 240}]
    payload = [event(sport_key="soccer_epl", home_team="Arsenal", away_team="Chelsea", bookmakers=[
        {"key": "b", "title": "B", "last_update": "2030-09-01T12:00:00Z", "markets": [{"key": "h2h", "outcomes": three_way}]}])]
    auto = quotes(run(write(tmp_path, payload)))
    assert auto[0].outcomes[0].price_format == "american"  # all prices >= 100: American (+150 / +220 / +240)
    forced = run(write(tmp_path, payload), price_format="decimal")
    assert forced.events and quotes(forced) == [] and "implausible overround" in forced.rejected[0].reason


def test_not_a_response_is_refused(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"message": "Invalid API key"}')
    with pytest.raises(FormatError):
        odds_api.parse(path, NOW)


@pytest.mark.parametrize("values, fmt", [
    (["-110", "-110"], "american"), (["150", "260"], "american"), (["1.91", "1.91"], "decimal"),
    (["5.0", "1.6", "4.2"], "decimal"), (["101", "1.01"], "decimal"), (["4", "1.25"], "decimal"),
])
def test_price_format_inference(values, fmt):
    assert prices.infer_format([Decimal(v) for v in values]) == fmt


def test_overround_bounds_keep_real_markets_and_drop_placeholders():
    prices.check_market([Decimal("-2400"), Decimal("1200")], "american", exchange=False)  # real, extreme
    prices.check_market([Decimal("-110"), Decimal("-110")], "american", exchange=False)
    prices.check_market([Decimal("-238"), Decimal("10900")], "american", exchange=True)  # lay: exempt
    with pytest.raises(prices.BadPrice):
        prices.check_market([Decimal("-5000"), Decimal("-5000")], "american", exchange=False)
    with pytest.raises(prices.BadPrice):
        prices.check_market([Decimal("1.0"), Decimal("1.5")], "decimal", exchange=False)
    counts = Counter(prices.infer_format([Decimal(v)]) for v in ("-150", "2.5"))
    assert counts == {"american": 1, "decimal": 1}
