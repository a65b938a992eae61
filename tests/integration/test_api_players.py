"""GET /v1/players/{player_id}: identity, availability, injury, news and stat lines,
from the real nflverse 2024 injury reports and weekly stats."""

from __future__ import annotations

import csv

from tests.support.sample_fold import INGESTED, SAMPLES, nfl_game_id, nfl_player, nfl_team


async def test_a_player_with_real_injury_reports_news_and_stat_lines(api, sample):
    tremble = nfl_player("00-0037005")  # Tommy Tremble, Carolina TE: eight designated reports in weeks 1-10
    r = await api.get(f"/v1/players/{tremble}")
    assert r.status_code == 200, r.text
    p = r.json()
    assert p["object"] == "player" and p["id"] == tremble and p["name"] == "Tommy Tremble"
    assert p["sport"] == "american_football" and p["position"] == "TE"
    assert p["team"]["id"] == nfl_team("CAR") and p["team"]["name"] == "Carolina Panthers"
    assert p["injury"]["status"] == "Questionable" and p["injury"]["detail"] == "Back"
    assert p["injury"]["week"] == 10 and p["injury"]["season"] == 2024
    assert p["injury"]["reported_at"] == "2024-11-08T17:55:59Z"
    assert p["availability"] == [{
        "status": "questionable", "game_id": p["availability"][0]["game_id"], "season": 2024, "week": 10,
        "provenance": p["availability"][0]["provenance"],
    }]
    assert p["availability"][0]["provenance"]["source"] == "nflverse"
    assert len(p["news"]) == 5  # at most five, newest first
    published = [n["published_at"] for n in p["news"]]
    assert published == sorted(published, reverse=True) and published[0] == "2024-11-08T17:55:59Z"
    assert all(n["kind"] == "injury" and len(n["headline"]) <= 200 and "\n" not in n["headline"] for n in p["news"])
    assert [(s["season"], s["basis"]) for s in p["season_lines"]] == [("2024", "per_game"), ("2024", "rate"), ("2024", "total")]
    assert all(s["game_id"] is None for s in p["season_lines"])
    with open(SAMPLES / "nflverse" / "player_stats_2024_weeks01-03.csv", newline="") as f:
        weeks = {int(r["week"]): r for r in csv.DictReader(f) if r["player_id"] == "00-0037005"}
    total = next(s for s in p["season_lines"] if s["basis"] == "total")
    assert total["stats"]["receiving_yards"] == sum(int(w["receiving_yards"]) for w in weeks.values())
    # game_lines: the latest game's line (week 3 at Las Vegas)
    latest = max(weeks)
    game = next(g for g in sample.schedule if g["season"] == "2024" and g["week"] == str(latest)
                and "CAR" in (g["home_team"], g["away_team"]))
    assert [g["game_id"] for g in p["game_lines"]] == [nfl_game_id(game)]
    assert p["game_lines"][0]["stats"]["receptions"] == int(weeks[latest]["receptions"])
    assert p["rg_line"] is None and p["live_topics"] == [] and p["stale_after_ms"] is None
    # as of its newest part: the stat lines, which the file gives no time for, as of when they were read
    assert p["as_of"] == INGESTED.strftime("%Y-%m-%dT%H:%M:%SZ") and "nflverse" in p["attribution"]


async def test_a_player_on_no_report_has_no_injury_member(api):
    with open(SAMPLES / "nflverse" / "injuries_2024_weeks01-10.csv", newline="") as f:
        reported = {r["gsis_id"] for r in csv.DictReader(f)}
    with open(SAMPLES / "nflverse" / "player_stats_2024_weeks01-03.csv", newline="") as f:
        healthy = next(r for r in csv.DictReader(f) if r["player_id"] not in reported)
    r = await api.get(f"/v1/players/{nfl_player(healthy['player_id'])}")
    assert r.status_code == 200, r.text
    p = r.json()
    assert "injury" not in p and p["availability"] == [] and p["news"] == []
    assert p["name"] == healthy["player_display_name"] and p["game_lines"]


async def test_unknown_and_malformed_player_ids(api):
    r = await api.get("/v1/players/plr_00000000000000000000")
    assert r.status_code == 404
    problem = r.json()
    assert problem["code"] == "not_found" and problem["param"] == "player_id" and problem["status"] == 404
    for bad in ("plr_1", "gm_00000000000000000000", "plr_0000000000000000000I", "PLR_00000000000000000000"):
        r = await api.get(f"/v1/players/{bad}")
        assert r.status_code == 400 and r.json()["code"] == "invalid_request" and r.json()["param"] == "player_id", bad
