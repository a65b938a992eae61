"""GET /v1/markets?game_id=… and GET /v1/markets/{market_id}: consensus and no-vig values,
recomputed here independently from the recorded per-book quotes (The Odds API, 19 books)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from domain import prices
from domain.ids import is_id
from schemas.natural_keys import market_id
from tests.support.sample_fold import ODDS_API, SAMPLES, game_of, nfl_game_id

API_DIR = Path(__file__).resolve().parents[2] / "api"
# betting exchanges among the file's books: their prices are not a bookmaker's, so no consensus
EXCHANGES = {"betfair", "matchbook", "betfair_ex_eu", "betfair_ex_uk", "smarkets"}


def _decimal(american: int) -> float:
    return prices.decimal_of_american(float(american))


def _independent_consensus(event: dict, mtype: str, point: float | None) -> tuple[list[float], list[float], int]:
    """Median price and renormalised median multiplicative no-vig probability per outcome
    (home, away) over the non-exchange books quoting this point: written out by hand here."""
    books = []
    for b in event["bookmakers"]:
        if b["key"] in EXCHANGES:
            continue
        for m in b["markets"]:
            if m["key"] != mtype:
                continue
            by_name = {o["name"]: o for o in m["outcomes"]}
            home, away = by_name[event["home_team"]], by_name[event["away_team"]]
            if point is not None and home.get("point") != point:
                continue
            books.append([_decimal(home["price"]), _decimal(away["price"])])
    novig = [[(1 / d) / sum(1 / x for x in book) for d in book] for book in books]
    medians = [statistics.median(p[i] for p in novig) for i in range(2)]
    return [statistics.median(b[i] for b in books) for i in range(2)], [m / sum(medians) for m in medians], len(books)


async def test_market_detail_equals_an_independent_recomputation_from_the_quotes(api, sample):
    event = sample.opener.event
    mid = market_id(sample.opener.game_id, "game", "spreads", "full", None)
    r = await api.get(f"/v1/markets/{mid}")
    assert r.status_code == 200, r.text
    market = r.json()
    assert market["object"] == "market" and market["id"] == mid and market["type"] == "spreads"
    assert market["game"]["name"] == "Buffalo Bills at Los Angeles Rams"
    main = market["main_line"]
    assert main["is_main"] and main["point"] == 2.5 and market["main_point"] == 2.5
    prices, probabilities, books = _independent_consensus(event, "spreads", 2.5)
    assert main["books"] == books == market["books"] == 16
    for outcome, price, p in zip(main["outcomes"], prices, probabilities):
        assert outcome["consensus_price"]["decimal"] == pytest.approx(price, abs=1e-12)
        assert outcome["no_vig_probability"] == pytest.approx(p, abs=1e-12)
        assert outcome["fair_price"]["decimal"] == pytest.approx(1 / p, abs=1e-12)
    assert main["hold"] == pytest.approx(1 - 1 / sum(1 / d for d in prices), abs=1e-12)
    assert main["overround"] == pytest.approx(sum(1 / d for d in prices) - 1, abs=1e-12)
    assert [o["selection"] for o in main["outcomes"]] == ["home", "away"]
    assert main["outcomes"][0]["consensus_price"]["american_display"] == "-110"
    assert main["outcomes"][0]["no_vig_probability_display"] == "50.00%" and main["hold_display"] == "4.55%"
    # betus alone hung 3: an alternate line of one bookmaker, whose prices are no consensus
    assert [(line["point"], line["books"], line["is_main"]) for line in market["alternate_lines"]] == [(3.0, 1, False)]
    assert _independent_consensus(event, "spreads", 3)[2] == 1
    assert all(o["consensus_price"] is None and o["no_vig_probability"] is None
               for o in market["alternate_lines"][0]["outcomes"])
    assert market["devig"] == {
        "method": "multiplicative", "card": "devig.multiplicative@1",
        "methods": ["multiplicative", "additive", "power", "shin", "odds_ratio"],
    }
    assert market["rg_line"] and market["live_topics"] == [f"market:{mid}"]
    assert market["attribution"] and "Odds API" in market["attribution"]


async def test_no_per_book_price_or_book_name_is_served(api, sample):
    event = sample.opener.event
    mid = market_id(sample.opener.game_id, "game", "h2h", "full", None)
    text = (await api.get(f"/v1/markets/{mid}")).text.lower()
    for book in event["bookmakers"]:
        assert book["key"] not in text and book["title"].lower() not in text
    # what is served per outcome is the consensus over all eligible books
    body = json.loads(text)
    prices, _, books = _independent_consensus(event, "h2h", None)
    assert body["main_line"]["books"] == books == 18
    assert [o["consensus_price"]["decimal"] for o in body["main_line"]["outcomes"]] == pytest.approx(prices, abs=1e-12)
    # no API code reads the internal per-book table
    for path in API_DIR.rglob("*.py"):
        assert "book_prices" not in path.read_text(), path


async def test_devig_method_is_chosen_per_request_and_unknown_methods_are_refused(api, sample):
    mid = market_id(sample.opener.game_id, "game", "h2h", "full", None)
    by_method = {}
    for method in ("multiplicative", "additive", "power", "shin", "odds_ratio"):
        r = await api.get(f"/v1/markets/{mid}", params={"devig": method})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["devig"]["method"] == method and body["devig"]["card"] == f"devig.{method}@1"
        probabilities = [o["no_vig_probability"] for o in body["main_line"]["outcomes"]]
        assert sum(probabilities) == pytest.approx(1.0, abs=1e-12)
        by_method[method] = probabilities
    assert by_method["multiplicative"] != by_method["shin"]  # a favourite-longshot price: methods differ
    bad = await api.get(f"/v1/markets/{mid}", params={"devig": "median"})
    assert bad.status_code == 400
    assert bad.json()["code"] == "invalid_request" and bad.json()["param"] == "devig"


async def test_a_three_way_soccer_market(api):
    with open(SAMPLES / "oddsapi" / "soccer_serie_a_2021_h2h_decimal.json") as f:
        event = json.load(f)[0]  # Atalanta BC v Spezia, 2021-11-20: ten bookmakers and an exchange
    mid = market_id(game_of(ODDS_API, event["id"]), "game", "h2h", "full", None)
    detail = (await api.get(f"/v1/markets/{mid}")).json()
    outcomes = detail["main_line"]["outcomes"]
    assert [o["selection"] for o in outcomes] == ["home", "away", "draw"]
    names = (event["home_team"], event["away_team"], "Draw")
    books = [[{o["name"]: o["price"] for o in b["markets"][0]["outcomes"]}[n] for n in names]
             for b in event["bookmakers"] if b["key"] not in EXCHANGES]
    assert detail["main_line"]["books"] == len(books) == 10
    novig = [[(1 / d) / sum(1 / x for x in book) for d in book] for book in books]
    medians = [statistics.median(p[i] for p in novig) for i in range(3)]
    for i, o in enumerate(outcomes):
        assert o["consensus_price"]["decimal"] == pytest.approx(statistics.median(b[i] for b in books), abs=1e-12)
        assert o["no_vig_probability"] == pytest.approx(medians[i] / sum(medians), abs=1e-12)
    assert detail["main_line"]["point"] is None and detail["alternate_lines"] == []


async def test_one_bookmakers_prices_are_not_served_as_a_consensus(api):
    """The 2024 EPL file has one book (betway) per game: its prices are no consensus."""
    with open(SAMPLES / "oddsapi" / "soccer_epl_2024_h2h_decimal.json") as f:
        event = json.load(f)[0]  # Leicester City v Tottenham Hotspur, betway alone
    mid = market_id(game_of(ODDS_API, event["id"]), "game", "h2h", "full", None)
    detail = (await api.get(f"/v1/markets/{mid}")).json()
    outcomes = detail["main_line"]["outcomes"]
    assert [o["selection"] for o in outcomes] == ["home", "away", "draw"]
    assert all(o["consensus_price"] is None and o["no_vig_probability"] is None for o in outcomes)


async def test_a_games_markets_in_registry_order(api, sample):
    row = next(g for g in sample.schedule if g["game_id"] == "2024_01_BAL_KC")
    gid = nfl_game_id(row)
    r = await api.get("/v1/markets", params={"game_id": gid})
    assert r.status_code == 200, r.text
    page = r.json()
    assert page["object"] == "list" and [m["type"] for m in page["data"]] == ["h2h", "spreads", "totals"]
    for m in page["data"]:
        assert is_id("market", m["id"]) and m["game_id"] == gid and m["rg_line"]
        assert m["stale_after_ms"] is None  # the game is final: its closing lines no longer move
        # nflverse's closing line is a published line, not a bookmaker: no bookmaker counted
        assert "main_line" not in m and m["books"] == 0
    spreads = next(m for m in page["data"] if m["type"] == "spreads")
    assert spreads["main_point"] == -3.0  # KC -3 at home
    first = (await api.get("/v1/markets", params={"game_id": gid, "limit": 2})).json()
    rest = (await api.get("/v1/markets", params={"game_id": gid, "limit": 2, "cursor": first["next_cursor"]})).json()
    assert [m["id"] for m in first["data"] + rest["data"]] == [m["id"] for m in page["data"]]
    only = (await api.get("/v1/markets", params={"game_id": gid, "type": "totals"})).json()["data"]
    assert [m["type"] for m in only] == ["totals"]
    missing = await api.get("/v1/markets", params={"game_id": "gm_00000000000000000000"})
    assert missing.status_code == 404 and missing.json()["param"] == "game_id"
    unknown = await api.get("/v1/markets/mkt_00000000000000000000")
    assert unknown.status_code == 404 and unknown.json()["param"] == "market_id"
    malformed = await api.get("/v1/markets/mkt_1")
    assert malformed.status_code == 400 and malformed.json()["param"] == "market_id"
