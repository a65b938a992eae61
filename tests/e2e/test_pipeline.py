"""The whole product as a user gets it: `svc up` with the sample data, checked through HTTP and the CLI.

Expected values are computed here from the sample files themselves (an independent reading of
the sources), never from what the service stored.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import statistics
import time
from datetime import datetime, timezone
from fractions import Fraction
from zoneinfo import ZoneInfo

import httpx
import pytest

from domain import prices
from ingest.samples import SAMPLES
from tests.e2e.stack import Stack, alive, processes_of

pytestmark = pytest.mark.e2e
NEW_YORK = ZoneInfo("America/New_York")
GAMES_CSV = SAMPLES / "nflverse" / "games_2023_2025.csv"


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    stack = Stack(tmp_path_factory.mktemp("pipeline") / "svc", sample=True, SVC_SANDBOX_SPEED="max")
    try:
        stack.wait_health()
        deadline = time.monotonic() + 180
        while not all(f'"child": "{c}", "event": "finished"' in stack.log_text() for c in ("sample", "sandbox")):
            assert time.monotonic() < deadline, f"sample data not loaded in time\n{stack.log_text()}"
            time.sleep(0.5)
        lag = stack.svc("lag", "--wait", "120")
        assert lag.returncode == 0, lag.stdout + lag.stderr
        yield stack
    finally:
        data_dir = stack.data_dir
        assert stack.stop() == 0, stack.log_text()
        deadline = time.monotonic() + 10
        while processes_of(data_dir) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert processes_of(data_dir) == []


def get(stack: Stack, path: str, key: str | None = None, **params) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.get(f"{stack.url}{path}", params=params, headers=headers, timeout=30)


def all_pages(stack: Stack, path: str, key: str | None = None, **params) -> list[dict]:
    items, cursor = [], None
    while True:
        body = get(stack, path, key, **params, **({"cursor": cursor} if cursor else {})).json()
        items += body["data"]
        if not body["has_more"]:
            return items
        cursor = body["next_cursor"]


def csv_games(season: str, week: str | None = None) -> list[dict]:
    with open(GAMES_CSV, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["season"] == season and (week is None or r["week"] == week)]
    for r in rows:
        local = datetime.fromisoformat(f"{r['gameday']}T{r['gametime']}").replace(tzinfo=NEW_YORK)
        r["kickoff"] = local.astimezone(timezone.utc)
    return sorted(rows, key=lambda r: (r["kickoff"], r["game_id"]))


def test_the_stack_reports_itself_healthy(stack):
    code, report = stack.svc_json("doctor")
    assert code == 0, {name: part for name, part in report.items() if part.get("ok") is False}
    assert {name for name, part in report.items() if part["ok"]} >= {"broker", "postgres", "api", "projector"}
    code, lag = stack.svc_json("lag")
    assert code == 0 and lag  # every projector partition listed, all caught up (lag --wait passed)


def test_2024_week_1_is_the_16_real_games_in_kickoff_order_with_real_scores(stack):
    expected = csv_games("2024", "1")
    assert len(expected) == 16
    body = get(stack, "/v1/games", competition="nfl", season="2024", week=1).json()
    assert body["has_more"] is False
    got = body["data"]
    assert [g["kickoff_at"] for g in got] == sorted(g["kickoff_at"] for g in got)
    # kickoff order; games kicking off together may come in any (but a stable) order
    assert [datetime.fromisoformat(g["kickoff_at"]) for g in got] == [r["kickoff"] for r in expected]
    rows = {(r["home_team"], r["away_team"]): r for r in expected}
    for game in got:
        row = rows.pop((game["home_team"]["abbreviation"], game["away_team"]["abbreviation"]))
        assert datetime.fromisoformat(game["kickoff_at"]) == row["kickoff"]
        assert game["status"] == "final"
        assert game["score"] == {"home": int(row["home_score"]), "away": int(row["away_score"])}
        assert "markets" not in game and "player_stats" not in game
    assert rows == {}


def test_the_sunday_slate_of_2024_09_08_in_new_york(stack):
    sunday = [r for r in csv_games("2024", "1") if r["gameday"] == "2024-09-08"]
    first = get(stack, "/v1/slate", date="2024-09-08", tz="America/New_York", limit=5).json()
    assert first["starts_at"] == "2024-09-08T04:00:00Z" and first["ends_at"] == "2024-09-09T04:00:00Z"
    assert first["game_count"] == len(sunday) == 13
    games = all_pages(stack, "/v1/slate", date="2024-09-08", tz="America/New_York", limit=5)
    assert sorted(g["home_team"]["abbreviation"] for g in games) == sorted(r["home_team"] for r in sunday)
    assert all({m["type"] for m in g["markets"]} >= {"h2h", "spreads", "totals"} for g in games)
    assert all("price" not in json.dumps(g["markets"]) for g in games)  # markets by identity only


def test_one_game_per_real_game_across_nflverse_and_the_odds_api(stack):
    odds = json.loads((SAMPLES / "oddsapi" / "nfl_2023_draftkings_spreads_american.json").read_text())
    games = all_pages(stack, "/v1/games", competition="nfl", season="2023", week=1)
    assert len(games) == len(csv_games("2023", "1")) == 16  # no second game made from the odds file
    by_home = {g["home_team"]["name"]: g for g in games}
    for event in odds:
        game = by_home[event["home_team"]]
        assert game["away_team"]["name"] == event["away_team"]
        known = {(k["source"], k["source_id"]) for k in game["provenance"]["known_by"]}
        assert ("The Odds API", event["id"]) in known
        assert any(source == "nflverse" for source, _ in known)


def american_to_decimal(price: int) -> float:
    return float(prices.decimal_of_american(Fraction(price)))


def test_consensus_no_vig_equals_a_recomputation_from_the_source_quotes(stack):
    """h2h of the first event of the 2022 capture: 19 books, American prices (rules of issue 4);
    the exchanges' back prices are no consensus input (issue 20 item 4)."""
    event = json.loads((SAMPLES / "oddsapi" / "nfl_2022_h2h_spreads_totals_american.json").read_text())[0]
    # an exchange is a book that quotes lay prices too: its back prices are left out as well
    exchanges = {b["key"] for b in event["bookmakers"] if any(m["key"] == "h2h_lay" for m in b["markets"])}
    assert exchanges
    quotes = []  # (last_update, {team: decimal price})
    for book in event["bookmakers"]:
        if book["key"] in exchanges:
            continue
        for market in book["markets"]:
            if market["key"] != "h2h":
                continue  # h2h_lay is an exchange market: never in consensus
            prices = {o["name"]: american_to_decimal(o["price"]) for o in market["outcomes"]}
            implied = sum(1 / p for p in prices.values())
            if implied > 1.5:
                continue  # the placeholder prices the ingest dead-letters (-5000/-5000 and the like)
            quotes.append((datetime.fromisoformat(book["last_update"].replace("Z", "+00:00")), prices))
    newest = max(ts for ts, _ in quotes)
    eligible = [p for ts, p in quotes if (newest - ts).total_seconds() <= 3600]
    teams = [event["home_team"], event["away_team"]]
    per_book = [{t: (1 / p[t]) / sum(1 / p[u] for u in teams) for t in teams} for p in eligible]
    medians = {t: statistics.median(b[t] for b in per_book) for t in teams}
    expected_prob = {t: medians[t] / sum(medians.values()) for t in teams}
    expected_price = {t: statistics.median(p[t] for p in eligible) for t in teams}
    expected_hold = 1 - 1 / sum(1 / expected_price[t] for t in teams)

    games = all_pages(stack, "/v1/games", competition="nfl", season="2022")
    (game,) = [g for g in games if g["home_team"]["name"] == event["home_team"]
               and g["kickoff_at"] == event["commence_time"]]
    markets = get(stack, "/v1/markets", game_id=game["id"]).json()["data"]
    (h2h,) = [m for m in markets if m["type"] == "h2h" and m["kind"] == "game"]
    detail = get(stack, f"/v1/markets/{h2h['id']}").json()
    line = detail["main_line"]
    assert line["books"] == detail["books"] == len(eligible) >= 10
    assert line["hold"] == pytest.approx(expected_hold, abs=1e-9)
    for outcome in line["outcomes"]:
        assert outcome["no_vig_probability"] == pytest.approx(expected_prob[outcome["name"]], abs=1e-9)
        assert outcome["consensus_price"]["decimal"] == pytest.approx(expected_price[outcome["name"]], abs=1e-9)
    assert detail["devig"]["card"].startswith("devig.multiplicative@")
    assert detail["rg_line"]
    body = json.dumps(detail).lower()
    assert not any(book["key"] in body for book in event["bookmakers"])  # never a per-book price


def test_a_player_with_real_injury_reports_and_stat_lines(stack):
    with open(SAMPLES / "nflverse" / "injuries_2024_weeks01-10.csv", newline="") as f:
        reports = [r for r in csv.DictReader(f) if r["full_name"] == "Davante Adams"]
    with open(SAMPLES / "nflverse" / "player_stats_2024_weeks01-03.csv", newline="") as f:
        lines = [r for r in csv.DictReader(f) if r["player_display_name"] == "Davante Adams"]
    latest = max(reports, key=lambda r: r["date_modified"])
    found = get(stack, "/v1/search", q="Davante Adams", kind="player").json()["data"]
    assert found and found[0]["name"] == "Davante Adams"
    player = get(stack, f"/v1/players/{found[0]['id']}").json()
    assert player["object"] == "player" and player["position"] == "WR"
    assert player["injury"]["status"] == latest["report_status"]
    assert player["injury"]["week"] == int(latest["week"])
    season = [s for s in player["season_lines"] if s["season"] == "2024" and s["basis"] == "total"]
    assert season and int(season[0]["stats"]["receiving_yards"]) == sum(int(r["receiving_yards"]) for r in lines)
    assert player["game_lines"] and all(g["game_id"] for g in player["game_lines"])
    assert 0 < len(player["news"]) <= 5


def test_search_finds_misspelt_players_and_teams_best_first(stack):
    mahomes = get(stack, "/v1/search", q="Mahomse").json()["data"]
    assert mahomes[0]["name"] == "Patrick Mahomes" and mahomes[0]["kind"] == "player"
    chiefs = get(stack, "/v1/search", q="Kanas City", kind="team").json()["data"]
    assert chiefs[0]["name"] == "Kansas City Chiefs"


def test_projections_verify_identical(stack):
    done = stack.svc("projections", "verify", timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "identical" in done.stdout


def test_keys_from_the_cli_and_test_mode_sees_only_the_sandbox(stack):
    code, created = stack.svc_json("keys", "create", "--account", "e2e", "--plan", "pro",
                                   "--scopes", "read:odds,read:players,read:reference", "--mode", "test")
    assert code == 0 and created["key"].startswith("svc_test_")
    key = created["key"]
    status = get(stack, "/v1/status", key).json()
    assert (status["credential"], status["mode"], status["plan"]) == ("key", "test", "pro")
    sandbox = all_pages(stack, "/v1/slate", key, tz="America/New_York")  # the sandbox day, on its clock
    real = {r["home_team"]: r for r in csv_games("2024", "1") if r["gameday"] == "2024-09-08"}
    assert len(sandbox) == len(real)
    for game in sandbox:  # the simulation played every game to its real final score
        row = real[game["home_team"]["abbreviation"]]
        assert game["status"] == "final"
        assert game["score"] == {"home": int(row["home_score"]), "away": int(row["away_score"])}
    assert get(stack, "/v1/games", key, competition="nfl", season="2023").json()["data"] == []
    assert len(get(stack, "/v1/games", competition="nfl", season="2023").json()["data"]) > 0
    refused = get(stack, "/v1/status", "svc_test_" + "x" * 48)
    assert refused.status_code == 401 and refused.json()["param"] == "Authorization"


def test_a_killed_projector_is_restarted_and_catches_up(stack):
    old = stack.pid("projector")
    assert old and alive(old)
    os.kill(old, signal.SIGKILL)
    new = stack.wait_pid_change("projector", old)
    assert new != old
    more = stack.svc("ingest", "odds-api", str(SAMPLES / "oddsapi" / "soccer_epl_2024_h2h_decimal.json"), "--json")
    assert more.returncode == 0 and json.loads(more.stdout)["accepted"] == 0  # loaded before: nothing new
    lag = stack.svc("lag", "--wait", "60")
    assert lag.returncode == 0, lag.stdout + lag.stderr
    done = stack.svc("projections", "verify", timeout=300)
    assert done.returncode == 0 and "identical" in done.stdout, done.stdout + done.stderr
