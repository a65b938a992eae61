"""Hostile and implausible records (issue 19, items 2-4), pure: no log.

Each bad record is rejected with its location and reason while the rest of the file goes on;
no value outside the documented bounds (schemas/bounds.py) reaches an event; names are
stored NFC without control or format characters.
"""

from __future__ import annotations

import csv
import io
import json
import unicodedata
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest import nflverse_games, nflverse_injuries, nflverse_player_stats, odds_api
from ingest.batches import collect
from ingest.pipeline import dead_letter
from ingest.records import Parsed, Rejected
from ingest.replay import distinct_events, read_lines
from ingest.resolution import MemoryResolver
from schemas import bounds
from schemas.events import (
    GameScheduled, GameStateChanged, Outcome, PlayerRegistered, PriceQuoted, StatLineRecorded, TeamRegistered,
)

NFLVERSE = Path(__file__).resolve().parents[2] / "ingest" / "samples" / "nflverse"
NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
FORBIDDEN = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


# ---- clean_text and the bounds themselves ---------------------------------------------------


@given(st.text(st.characters(blacklist_categories=())))  # every category, lone surrogates included
def test_clean_text_leaves_no_control_or_format_character_and_is_nfc(s):
    out = bounds.clean_text(s)
    assert not {unicodedata.category(c) for c in out} & FORBIDDEN
    assert unicodedata.is_normalized("NFC", out)
    assert out == out.strip() and "  " not in out
    assert bounds.clean_text(out) == out  # idempotent


def test_clean_text_strips_bidi_zero_width_and_nul():
    assert bounds.clean_text("Pat\u202erick\u200b Ma\x00homes\u2066") == "Patrick Mahomes"
    assert bounds.clean_text("Jose\u0301  Ramos\n") == "José Ramos"  # NFC: one code point
    assert bounds.clean_text("\ufeff\u200d") == ""


@pytest.mark.parametrize("price, fmt, ok", [
    ("-110", "american", True), ("100", "american", True), ("-100", "american", True),
    ("1000000", "american", True), ("-1000000", "american", True), ("1000001", "american", False),
    ("-1E+11", "american", False), ("1E+11", "american", False), ("99", "american", False),
    ("NaN", "american", False), ("Infinity", "american", False), ("-Infinity", "american", False),
    ("1.01", "decimal", True), ("10001", "decimal", True), ("10001.5", "decimal", False),
    ("1", "decimal", False), ("Infinity", "decimal", False), ("NaN", "decimal", False), ("sNaN", "decimal", False),
])
def test_price_bounds(price, fmt, ok):
    assert (bounds.price_problem(Decimal(price), fmt) is None) is ok


@given(st.decimals(allow_nan=True, allow_infinity=True), st.sampled_from(["american", "decimal"]))
def test_price_problem_never_raises_and_what_passes_is_inside_the_bounds(price, fmt):
    problem = bounds.price_problem(price, fmt)
    assert bounds.price_ok(price, fmt) is (problem is None)  # the fast predicate says the same
    if problem is None:
        assert price.is_finite()
        if fmt == "american":
            assert bounds.AMERICAN_MIN <= abs(price) <= bounds.AMERICAN_MAX
        else:
            assert 1 < price <= bounds.DECIMAL_MAX
    else:
        assert isinstance(problem, str) and problem


@pytest.mark.parametrize("point, market, ok", [
    ("-3.5", "spreads", True), ("1000", "spreads", True), ("-1000", "spreads", True), ("1000.5", "spreads", False),
    ("1E+300", "spreads", False), ("-1E+300", "spreads", False), ("47.5", "totals", True), ("0", "totals", True),
    ("-3", "totals", False), ("NaN", "totals", False), ("1E-999999", "spreads", False),
])
def test_point_bounds(point, market, ok):
    assert (bounds.point_problem(Decimal(point), market) is None) is ok
    assert bounds.point_ok(Decimal(point), market) is ok


@given(st.decimals(allow_nan=True, allow_infinity=True), st.sampled_from(["spreads", "totals", "h2h"]))
def test_point_ok_agrees_with_point_problem(point, market):
    assert bounds.point_ok(point, market) is (bounds.point_problem(point, market) is None)


def test_integer_text_of_absurd_length_is_refused_before_int():
    assert bounds.integer_text_problem("1" * 400, "week") is not None
    assert bounds.integer_text_problem("-12", "week") is None


def test_event_backstop_catches_what_an_adapter_let_through():
    def quote(price="-110", point=None, name="Home"):
        return PriceQuoted(
            source="s", source_id="x", source_ts=NOW, ingest_ts=NOW, game_id="gm_1", market_id="mkt_1", book="b",
            kind="game", market_type="totals" if point is not None else "h2h", point=Decimal(point) if point else None,
            outcomes=[Outcome(selection="home", name=name, price=Decimal(price), price_format="american"),
                      Outcome(selection="away", name="Away", price=Decimal("-110"), price_format="american")])
    assert bounds.event_problem(quote()) is None
    assert "price" in bounds.event_problem(quote(price="-1E+11"))
    assert "point" in bounds.event_problem(quote(point="-5"))
    assert bounds.event_problem(quote(name="Ho\x00me")) is not None
    old = GameStateChanged(source="s", source_id="x", source_ts=datetime(1, 1, 1, tzinfo=timezone.utc), ingest_ts=NOW,
                           game_id="gm_1", status="final", score_home=3, score_away=10 ** 400)
    assert bounds.event_problem(old) is not None


def test_dead_letter_raw_is_bounded_and_shows_bad_bytes():
    parsed = Parsed("nflverse-games", "f.csv", 1, iter(()))
    letter = dead_letter(parsed, Rejected(0, "line 2", "a\udcffb" + "x" * (bounds.RAW_MAX * 3), "r" * 100_000), NOW)
    assert letter.raw.startswith("a\\xffb") and len(letter.raw.encode()) <= bounds.RAW_MAX
    assert len(letter.reason) <= bounds.TEXT_MAX
    msgspec.json.encode(letter)  # encodable: no lone surrogate left


# ---- nflverse games: a file with every kind of bad value among good rows --------------------


def games_rows():
    text = (NFLVERSE / "games_2023_2025.csv").read_text()
    reader = csv.DictReader(io.StringIO(text))
    return reader.fieldnames, [next(reader) for _ in range(3)]


def write_csv(path: Path, header: list[str], rows: list[dict]) -> None:
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=header, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    data = out.getvalue().encode()
    path.write_bytes(data.replace(b"@FF@", b"\xff"))


HOSTILE_GAMES = [  # (what, changes, the row is rejected whole?, part rejected)
    ("american 1e11", {"home_moneyline": "100000000000"}, False, "h2h"),
    ("american -1e11", {"away_moneyline": "-1e11"}, False, "h2h"),
    ("points 1e300", {"spread_line": "1e300"}, False, "spreads"),
    ("points -1e300", {"spread_line": "-1e300"}, False, "spreads"),
    ("negative total", {"total_line": "-3"}, False, "totals"),
    ("Infinity price", {"over_odds": "Infinity"}, False, "totals"),
    ("NaN price", {"home_spread_odds": "NaN"}, False, "spreads"),
    ("non-UTF-8 byte", {"stadium": "Arrow@FF@head"}, True, None),
    ("year 0001", {"gameday": "0001-09-07"}, True, None),
    ("year 9999 season", {"season": "9999"}, True, None),
    ("400-digit week", {"week": "1" * 400}, True, None),
    ("400-digit score", {"home_score": "9" * 400}, True, None),
    ("score above the bound", {"home_score": "1000"}, True, None),
    ("NUL in an ID", {"game_id": "2023_01_\x00DET_KC"}, True, None),
    ("10 MB field", {"referee": "x" * 10_000_000}, True, None),
]


def test_games_file_with_hostile_rows(tmp_path):
    header, (good, second, third) = games_rows()
    rows = [good]
    for i, (_, changes, _, _) in enumerate(HOSTILE_GAMES):
        rows.append({**second, "game_id": f"2023_01_CAR_ATL_{i}", **changes})
    # names: stored cleaned, never rejected for it
    rows.append({**third, "stadium": "Stad\u202eium\u200b of \x00Tests"})
    path = tmp_path / "games.csv"
    write_csv(path, header, rows)
    c = collect(nflverse_games.parse(path, NOW).items, MemoryResolver())
    by_line: dict[int, list[Rejected]] = {}
    for r in c.rejected:
        by_line.setdefault(int(r.location.split()[1]), []).append(r)
    for i, (what, _, whole, part) in enumerate(HOSTILE_GAMES):
        line = i + 3
        assert line in by_line, f"{what}: not rejected"
        (r,) = by_line[line]
        assert r.reason, what
        if whole:
            assert r.location == f"line {line}", what
        else:
            assert r.location == f"line {line} ({part} closing line)", what
    assert set(by_line) == {i + 3 for i in range(len(HOSTILE_GAMES))}
    games = {e.source_id: e for e in c.events if isinstance(e, GameScheduled)}
    assert good["game_id"] in games and "2023_01_CAR_ATL_0" in games  # a bad line drops only its market
    assert games[third["game_id"]].venue == "Stadium of Tests"
    for e in c.events:
        assert bounds.event_problem(e) is None, e
    by_market = {(e.source_id, e.market_type) for e in c.events if isinstance(e, PriceQuoted)}
    assert ("2023_01_CAR_ATL_0", "h2h") not in by_market and ("2023_01_CAR_ATL_0", "spreads") in by_market


GAMES_HEADER, GAMES_GOOD = games_rows()
ANY_VALUE = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",))),  # Cs: cannot be written as UTF-8
    st.sampled_from(["NaN", "Infinity", "-Infinity", "1e300", "-1e300", "1e-999999", "0001-01-01", "9" * 400,
                     "\x00", "\u202e", "-100000000000"]),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(column=st.sampled_from(GAMES_HEADER), value=ANY_VALUE)
def test_any_value_in_any_column_is_an_event_inside_the_bounds_or_a_dead_letter(tmp_path, column, value):
    good, other, _ = GAMES_GOOD
    path = tmp_path / "fuzz.csv"
    write_csv(path, GAMES_HEADER, [good, {**other, column: value}])
    parsed = nflverse_games.parse(path, NOW)
    c = collect(parsed.items, MemoryResolver())  # never raises
    assert good["game_id"] in {e.source_id for e in c.events if isinstance(e, GameScheduled)}
    assert all(bounds.event_problem(e) is None for e in c.events)
    for r in c.rejected:
        # (a bare \r is a line break to CSV: the row is then two rows, both rejected)
        assert int(r.location.split()[1]) >= 3 and r.reason
        msgspec.json.encode(dead_letter(parsed, r, NOW))


def test_dead_letters_of_hostile_rows_encode_and_stay_bounded(tmp_path):
    header, (good, second, _) = games_rows()
    path = tmp_path / "games.csv"
    write_csv(path, header, [good, {**second, "weekday": "Sun@FF@day", "referee": "y" * 10_000_000}])
    parsed = nflverse_games.parse(path, NOW)
    c = collect(parsed.items, MemoryResolver())
    (r,) = c.rejected
    letter = dead_letter(parsed, r, NOW)
    assert letter.location == "line 3" and len(letter.raw.encode()) <= bounds.RAW_MAX
    assert "\\xff" in letter.raw and msgspec.json.encode(letter)


# ---- injuries and player stats: names cleaned, numbers bounded ------------------------------


def test_player_names_are_cleaned_and_numbers_bounded(tmp_path):
    games = collect(nflverse_games.parse(NFLVERSE / "games_2023_2025.csv", NOW).items, resolver := MemoryResolver())
    assert games.rejected == []
    text = (NFLVERSE / "injuries_2024_weeks01-10.csv").read_text()
    reader = csv.DictReader(io.StringIO(text))
    header, first = reader.fieldnames, {**next(reader), "practice_status": ""}  # one line per row
    rows = [
        {**first, "full_name": "Jo\x00nah \u202eWilliams\u200b"},
        {**first, "gsis_id": "00-1", "date_modified": "0001-01-01T00:00:00Z"},
        {**first, "gsis_id": "00-2", "week": "9" * 400},
        {**first, "gsis_id": "00-3", "season": "12"},
    ]
    path = tmp_path / "inj.csv"
    write_csv(path, header, rows)
    c = collect(nflverse_injuries.parse(path, NOW).items, resolver)
    assert sorted(r.location for r in c.rejected) == ["line 3", "line 4", "line 5"]
    (player,) = [e for e in c.events if isinstance(e, PlayerRegistered)]
    assert player.name == "Jonah Williams"

    text = (NFLVERSE / "player_stats_2024_weeks01-03.csv").read_text()
    reader = csv.DictReader(io.StringIO(text))
    header, first = reader.fieldnames, next(reader)
    rows = [
        {**first, "player_display_name": "Aaron\u2067 Rodgers\x00"},
        {**first, "player_id": "00-9", "passing_yards": "1e300"},
        {**first, "player_id": "00-8", "completions": "1" * 400},
        {**first, "player_id": "00-7", "passing_epa": "Infinity"},
    ]
    path = tmp_path / "stats.csv"
    write_csv(path, header, rows)
    c = collect(nflverse_player_stats.parse(path, NOW).items, resolver)
    assert sorted(r.location for r in c.rejected) == ["line 3", "line 4", "line 5"]
    (player,) = [e for e in c.events if isinstance(e, PlayerRegistered)]
    assert player.name == "Aaron Rodgers"
    assert len([e for e in c.events if isinstance(e, StatLineRecorded)]) == 1


# ---- The Odds API: each bad part dead-lettered at its path ----------------------------------


def odds_event(**over) -> dict:
    e = {
        "id": "e1", "sport_key": "americanfootball_nfl", "commence_time": "2030-09-08T17:00:00Z",
        "home_team": "Kansas City Chiefs", "away_team": "Las Vegas Raiders",
        "bookmakers": [{"key": "b1", "title": "B1", "last_update": "2030-09-01T12:00:00Z", "markets": [
            {"key": "h2h", "outcomes": [{"name": "Las Vegas Raiders", "price": 150},
                                        {"name": "Kansas City Chiefs", "price": -170}]},
        ]}],
    }
    e.update(over)
    return e


def market(key, *outcomes):
    return {"key": "b1", "title": "B1", "last_update": "2030-09-01T12:00:00Z",
            "markets": [{"key": key, "outcomes": list(outcomes)}]}


def o(name, price, point=None):
    out = {"name": name, "price": price}
    if point is not None:
        out["point"] = point
    return out


def test_odds_api_hostile_values(tmp_path):
    kc, lv = "Kansas City Chiefs", "Las Vegas Raiders"
    books = [
        market("h2h", o(kc, "NaN"), o(lv, 150)),
        market("h2h", o(kc, "Infinity"), o(lv, 1.5)),
        market("h2h", o(kc, -1e11), o(lv, 1e11)),
        market("spreads", o(kc, -110, 1e300), o(lv, -110, -1e300)),
        market("totals", o("Over", -110, -3), o("Under", -110, -3)),
        market("totals", o("Over", -110, 47.5), o("Under", -110, 47.5)),  # fine
    ]
    payload = [
        odds_event(bookmakers=books),
        odds_event(id="e2", commence_time="0001-01-01T00:00:00Z"),
        odds_event(id="e3\x00"),
        odds_event(id="e4", home_team="Arsenal\u202e", away_team="Chel\u200bsea", sport_key="soccer_epl",
                   bookmakers=[market("h2h", o("Arsenal", 2.1), o("Chelsea", 3.4), o("Draw", 3.3))]),
        odds_event(id="e5"),
    ]
    text = json.dumps(payload)
    path = tmp_path / "odds.json"
    path.write_bytes(text.encode().replace(b'"id": "e5"', b'"id": "e5\xff"'))
    c = collect(odds_api.parse(path, NOW).items, MemoryResolver())
    rejected = {r.location for r in c.rejected}
    assert rejected == {
        "$[0].bookmakers[0].markets[0]", "$[0].bookmakers[1].markets[0]", "$[0].bookmakers[2].markets[0]",
        "$[0].bookmakers[3].markets[0]", "$[0].bookmakers[4].markets[0]", "$[1]", "$[2]", "$[4]",
    }, c.rejected
    quotes = [e for e in c.events if isinstance(e, PriceQuoted)]
    assert [(q.source_id, q.market_type) for q in quotes] == [("e1", "totals"), ("e4", "h2h")]
    teams = {e.name for e in c.events if isinstance(e, TeamRegistered)}
    assert {"Arsenal", "Chelsea"} <= teams
    assert all(bounds.event_problem(e) is None for e in c.events)


# The Odds API checks each quote's prices and points as it reads them (at the market's path), so
# the bounds check does not repeat them: whatever numbers a market holds, every quote it lets
# through passes the whole bounds check, and every market it refuses is dead-lettered at its path.
ODDS_NUMBER = st.one_of(
    st.integers(-10**12, 10**12), st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["NaN", "Infinity", "-Infinity", "1e300", "-1e-999999", "1" * 60, "-110", "2.5", "100"]),
    st.decimals(allow_nan=True, allow_infinity=True).map(str),
)
# half the time a plausible price or point, so that some lines are accepted
PLAUSIBLE = st.one_of(ODDS_NUMBER, st.sampled_from(["-110", "-105", "120", "-2.5", "2.5", "47.5", "0"]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from(["h2h", "spreads", "totals", "h2h_lay", "alternate_spreads", "totals_q1"]),
       numbers=st.lists(PLAUSIBLE, min_size=4, max_size=4), paired=st.booleans())
def test_odds_api_quotes_checked_once_are_inside_every_bound(tmp_path, key, numbers, paired):
    kc, lv = "Kansas City Chiefs", "Las Vegas Raiders"
    a, b = ("Over", "Under") if key.startswith("totals") else (kc, lv)
    if paired:  # the second point pairs with the first (a line that can be accepted)
        numbers[3] = numbers[2] if key.startswith("totals") or not isinstance(numbers[2], (int, float)) else -numbers[2]
    books = [market(key, o(a, numbers[0], numbers[2]), o(b, numbers[1], numbers[3])),
             market("h2h", o(kc, -170), o(lv, 150))]
    path = tmp_path / "odds.json"
    path.write_text(json.dumps([odds_event(bookmakers=books)]))
    parsed = odds_api.parse(path, NOW)
    c = collect(parsed.items, MemoryResolver())
    quotes = [e for e in c.events if isinstance(e, PriceQuoted)]
    assert all(bounds.event_problem(e) is None for e in c.events)  # the whole check, numbers included
    assert len(quotes) + len(c.rejected) == 2, c.rejected
    assert {r.location for r in c.rejected} <= {"$[0].bookmakers[0].markets[0]"}
    assert all(r.reason for r in c.rejected)


def test_a_quote_whose_numbers_were_checked_still_has_its_text_checked():
    good = PriceQuoted(
        source="s", source_id="x", source_ts=NOW, ingest_ts=NOW, game_id="gm_1", market_id="mkt_1", book="b",
        kind="game", market_type="h2h",
        outcomes=[Outcome(selection="home", name="H", price=Decimal("-110"), price_format="american"),
                  Outcome(selection="away", name="A", price=Decimal("-110"), price_format="american")])
    assert bounds.event_problem(good, quote_numbers_checked=True) is None
    long_name = msgspec.structs.replace(good, outcomes=[
        msgspec.structs.replace(good.outcomes[0], name="x" * 201), good.outcomes[1]])
    assert "characters long" in bounds.event_problem(long_name, quote_numbers_checked=True)
    control = msgspec.structs.replace(good, book_name="B\x00")
    assert "U+0000" in bounds.event_problem(control, quote_numbers_checked=True)
    late = msgspec.structs.replace(good, source_ts=datetime(2200, 1, 1, tzinfo=timezone.utc))
    assert "source_ts" in bounds.event_problem(late, quote_numbers_checked=True)


# ---- replay: lines that are not sound events are dead letters, repeats count once -----------


def test_replay_reads_bad_lines_as_dead_letters_and_counts_each_event_once(tmp_path):
    good = PriceQuoted(
        source="s", source_id="x", source_ts=NOW, ingest_ts=NOW, game_id="gm_1", market_id="mkt_1", book="b",
        kind="game", market_type="h2h", event_id="evt_1",
        outcomes=[Outcome(selection="home", name="H", price=Decimal("-110"), price_format="american"),
                  Outcome(selection="away", name="A", price=Decimal("-110"), price_format="american")])
    bad = msgspec.structs.replace(good, event_id="evt_2", outcomes=[
        msgspec.structs.replace(good.outcomes[0], price=Decimal("-1E+11")), good.outcomes[1]])
    from schemas.events import encode

    def line(e):
        return json.dumps({"ts": "2026-01-01T00:00:00Z", "topic": "feed.games", "key": e.game_id,
                           "event": json.loads(encode(e)), "partition": 0, "offset": 0})
    path = tmp_path / "x.jsonl"
    path.write_text("\n".join([line(good), line(bad), line(good), "{\"ts\": 1}"]) + "\n")
    lines, dead, count = read_lines(path, NOW)
    assert count == 4 and [d.location for d in dead] == ["line 2", "line 4"]
    assert "price" in dead[0].reason
    assert len(lines) == 2 and distinct_events(lines) == 1
