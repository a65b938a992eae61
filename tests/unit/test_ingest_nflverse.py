"""The nflverse adapters on the real sample files and on hand-made broken rows (pure: no log)."""

from __future__ import annotations

import csv

from collections import Counter
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path

import pytest

from ingest import nflverse_games, nflverse_injuries, nflverse_player_stats
from ingest.batches import collect
from ingest.records import FormatError
from ingest.resolution import MemoryResolver
from schemas import natural_keys
from schemas.events import (
    GameRescheduled, GameScheduled, GameStateChanged, InjuryReported, NewsPublished, PlayerRegistered, PriceQuoted,
    StatLineRecorded, TeamRegistered, decode, encode,
)

SAMPLES = Path(__file__).resolve().parents[2] / "ingest" / "samples" / "nflverse"
NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
GAMES_HEADER = (SAMPLES / "games_2023_2025.csv").read_text().splitlines()[0]


@pytest.fixture(scope="module")
def resolver_with_games():
    resolver = MemoryResolver()
    games = collect(nflverse_games.parse(SAMPLES / "games_2023_2025.csv", NOW).items, resolver)
    return resolver, games


def by_source_id(events, kind):
    return {e.source_id: e for e in events if isinstance(e, kind)}


def test_games_file_counts(resolver_with_games):
    _, games = resolver_with_games
    assert games.records == 842 and games.rejected == []
    assert Counter(type(e).__name__ for e in games.events) == {
        "TeamRegistered": 32, "GameScheduled": 842, "GameStateChanged": 777, "PriceQuoted": 2382,
    }
    assert len({e.event_id for e in games.events}) == len(games.events)


def test_kickoff_is_new_york_time_stored_utc(resolver_with_games):
    _, games = resolver_with_games
    g = by_source_id(games.events, GameScheduled)
    assert g["2023_01_DET_KC"].kickoff_at == datetime(2023, 9, 8, 0, 20, tzinfo=timezone.utc)  # 20:20 EDT
    assert g["2023_19_MIA_KC"].kickoff_at.utcoffset().total_seconds() == 0
    assert g["2023_19_MIA_KC"].kickoff_at.hour == 1  # 20:00 EST (UTC-5) in January
    assert g["2023_01_DET_KC"].kickoff_date is None
    assert (g["2024_01_PIT_ATL"].season, g["2024_01_PIT_ATL"].week, g["2024_01_PIT_ATL"].season_type) == ("2024", 1, "REG")
    # the source's own value, not a coarser one (issue 20 item 9)
    assert g["2023_22_SF_KC"].season_type == "SB" and g["2023_22_SF_KC"].name.startswith("Super Bowl: ")
    assert {e.season_type for e in g.values()} == {"REG", "WC", "DIV", "CON", "SB"}


def test_game_ids_are_natural_and_teams_resolved(resolver_with_games):
    _, games = resolver_with_games
    g = by_source_id(games.events, GameScheduled)["2024_01_LA_DET"]
    la, det = natural_keys.team_id("nfl", "LA"), natural_keys.team_id("nfl", "DET")
    assert (g.home_team_id, g.away_team_id) == (det, la)
    assert g.game_id == natural_keys.game_id("nfl", det, la, datetime(2024, 9, 8).date())
    assert {k.source for k in g.known_by} == {"nflverse", "espn", "nfl gsis"}


def test_closing_lines_keep_digits_and_the_home_handicap_convention(resolver_with_games):
    _, games = resolver_with_games
    lines = [e for e in games.events if isinstance(e, PriceQuoted) and e.source_id == "2023_01_DET_KC"]
    assert {e.source for e in lines} == {"nflverse closing lines"} and {e.book for e in lines} == {"nflverse"}
    h2h, spreads, totals = (next(e for e in lines if e.market_type == m) for m in ("h2h", "spreads", "totals"))
    # spread_line 4 means KC (home) favoured by 4: the home handicap is -4
    assert spreads.point == Decimal("-4")
    assert [(o.selection, o.point, o.price) for o in spreads.outcomes] == [
        ("home", Decimal("-4"), Decimal("-110")), ("away", Decimal("4"), Decimal("-110"))]
    assert [(o.selection, str(o.price)) for o in h2h.outcomes] == [("home", "-198"), ("away", "164")]
    assert h2h.point is None and totals.point == Decimal("53")
    assert [o.selection for o in totals.outcomes] == ["over", "under"]
    assert all(o.price_format == "american" for e in lines for o in e.outcomes)
    assert spreads.market_id == natural_keys.market_id(spreads.game_id, "game", "spreads", "full", None)
    assert spreads.source_ts == by_source_id(games.events, GameScheduled)["2023_01_DET_KC"].kickoff_at
    assert b'"price":"-198"' in encode(h2h)


def test_finals_only_when_scored_and_unscored_games_have_no_lines_when_the_source_has_none(resolver_with_games):
    _, games = resolver_with_games
    finals = by_source_id(games.events, GameStateChanged)
    f = finals["2024_01_LA_DET"]
    assert (f.status, f.score_home, f.score_away, f.period) == ("final", 26, 20, "OT")
    assert "2025_14_HOU_KC" in finals and "2025_14_PHI_LAC" not in finals
    quoted = {e.source_id for e in games.events if isinstance(e, PriceQuoted)}
    assert any(s.startswith("2025_15_") for s in quoted)
    assert not any(s.startswith(("2025_16_", "2025_17_", "2025_18_")) for s in quoted)


def test_neutral_sites_keep_real_venues_and_drop_the_copied_home_stadium(resolver_with_games):
    _, games = resolver_with_games
    g = by_source_id(games.events, GameScheduled)
    assert g["2023_04_ATL_JAX"].venue == "Wembley Stadium" and g["2023_04_ATL_JAX"].neutral_site
    assert g["2024_19_MIN_LA"].venue == "State Farm Stadium"
    for wrong in ("2025_01_KC_LAC", "2025_04_MIN_PIT", "2025_05_MIN_CLE", "2025_06_DEN_NYJ", "2025_07_LA_JAX",
                  "2025_10_ATL_IND", "2025_11_WAS_MIA"):
        assert g[wrong].neutral_site and g[wrong].venue is None, wrong
    assert g["2023_01_DET_KC"].venue == "GEHA Field at Arrowhead Stadium" and not g["2023_01_DET_KC"].neutral_site


def test_events_round_trip_the_log_encoding(resolver_with_games):
    _, games = resolver_with_games
    for e in games.events[:200]:
        assert decode(encode(e)) == e


def write(tmp_path: Path, name: str, lines: list[str]) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def test_broken_game_rows_are_rejected_with_reasons_and_the_rest_go_on(tmp_path):
    good = "2024_01_PIT_ATL,2024,REG,1,2024-09-08,Sunday,13:00,PIT,18,ATL,10,Home,-8,28,0,2024090800,,,,,,,7,7,160,-192,4,-110,-110,43,-110,-110,0,closed,,,,,,,,,,,ATL97,Mercedes-Benz Stadium"
    rows = [
        GAMES_HEADER,
        good,
        good.replace("PIT,18", "XYZ,18"),  # unknown team
        good.replace("2024-09-08", "2024-13-45"),  # bad date
        good.replace("2024_01_PIT_ATL", "2024_01_NOSPREADPRICE").replace(",-110,-110,43,", ",,-110,43,"),
        good.replace("2024_01_PIT_ATL,", "2024_01_X,") + ",extra",  # wrong field count
        good.replace("2024_01_PIT_ATL", "2024_01_ATL_ATL").replace("PIT,18", "ATL,18"),  # one team twice
        good.replace("2024_01_PIT_ATL", "2024_01_NOTIME").replace(",13:00,", ",,"),  # no time: a date only
    ]
    parsed = nflverse_games.parse(write(tmp_path, "g.csv", rows), NOW)
    c = collect(parsed.items, MemoryResolver())
    reasons = {r.location: r.reason for r in c.rejected}
    assert c.records == 7
    assert "unknown NFL team 'XYZ'" in reasons["line 3"]
    assert "gameday" in reasons["line 4"]
    assert "incomplete closing line" in reasons["line 5 (spreads closing line)"]
    assert "expected 46 fields, found 47" in reasons["line 6"]
    assert "same team" in reasons["line 7"]
    assert all(r.raw for r in c.rejected)
    scheduled = by_source_id(c.events, GameScheduled)
    assert set(scheduled) == {"2024_01_PIT_ATL", "2024_01_NOSPREADPRICE", "2024_01_NOTIME"}
    # line 5 lost only its spread: the game, its moneyline and its total are there
    kept = {e.market_type for e in c.events if isinstance(e, PriceQuoted) and e.source_id == "2024_01_NOSPREADPRICE"}
    assert kept == {"h2h", "totals"}
    assert scheduled["2024_01_NOTIME"].kickoff_at is None and str(scheduled["2024_01_NOTIME"].kickoff_date) == "2024-09-08"


def test_a_moved_game_is_rescheduled_under_its_first_id(tmp_path):
    row = "2024_01_PIT_ATL,2024,REG,1,2024-09-08,Sunday,13:00,PIT,,ATL,,Home,,,,2024090800,,,,,,,7,7,,,,,,,,,0,closed,,,,,,,,,,,ATL97,Mercedes-Benz Stadium"
    resolver = MemoryResolver()
    first = collect(nflverse_games.parse(write(tmp_path, "a.csv", [GAMES_HEADER, row]), NOW).items, resolver)
    moved = row.replace("2024-09-08,Sunday,13:00", "2024-09-09,Monday,20:15")
    second = collect(nflverse_games.parse(write(tmp_path, "b.csv", [GAMES_HEADER, moved]), NOW).items, resolver)
    (g1,) = [e for e in first.events if isinstance(e, GameScheduled)]
    (re,) = [e for e in second.events if isinstance(e, GameRescheduled)]
    assert re.game_id == g1.game_id and re.kickoff_at == datetime(2024, 9, 10, 0, 15, tzinfo=timezone.utc)
    assert not any(isinstance(e, GameRescheduled) for e in first.events)


def test_wrong_file_is_refused_before_anything_is_read(tmp_path):
    with pytest.raises(FormatError):
        nflverse_games.parse(write(tmp_path, "x.csv", ["a,b,c", "1,2,3"]), NOW)
    with pytest.raises(FormatError):
        nflverse_player_stats.parse(write(tmp_path, "y.csv", ["player_id,season,week", "1,2,3"]), NOW)


def test_player_stats_link_to_games_and_keep_exact_digits(resolver_with_games):
    resolver, games = resolver_with_games
    c = collect(nflverse_player_stats.parse(SAMPLES / "player_stats_2024_weeks01-03.csv", NOW).items, resolver)
    assert c.records == 935 and c.rejected == []
    lines = by_source_id(c.events, StatLineRecorded)
    assert len(lines) == 935 and len(by_source_id(c.events, PlayerRegistered)) == 402
    rodgers = lines["00-0023459/2024/1"]
    assert rodgers.stats["completions"] == 13 and isinstance(rodgers.stats["completions"], int)
    assert str(rodgers.stats["passing_epa"]) == "3.25828279805137"
    assert "racr" not in rodgers.stats  # empty (undefined) ratio: left out
    assert rodgers.season == "2024" and rodgers.week == 1 and rodgers.season_type == "regular"
    scheduled = by_source_id(games.events, GameScheduled)
    assert rodgers.game_id == scheduled["2024_01_NYJ_SF"].game_id
    assert rodgers.source_ts == scheduled["2024_01_NYJ_SF"].kickoff_at + nflverse_games.FINAL_AFTER
    # the CHI-vs-CHI source row (should be TEN): linked by team and week to TEN at CHI
    owens = next(e for e in c.events if isinstance(e, StatLineRecorded) and e.stats.get("special_teams_tds") == 1
                 and e.team_id == natural_keys.team_id("nfl", "CHI"))
    assert owens.game_id == scheduled["2024_01_TEN_CHI"].game_id


def test_player_stats_without_a_known_game_are_dead_lettered():
    c = collect(nflverse_player_stats.parse(SAMPLES / "player_stats_2024_weeks01-03.csv", NOW).items, MemoryResolver())
    assert len(c.rejected) == 935 and c.events == []
    assert c.rejected[0].location == "line 2" and "no known game for NYJ in 2024 week 1" in c.rejected[0].reason


def test_injuries_with_line_breaks_inside_quotes(resolver_with_games):
    resolver, _ = resolver_with_games
    parsed = nflverse_injuries.parse(SAMPLES / "injuries_2024_weeks01-10.csv", NOW)
    c = collect(parsed.items, resolver)
    assert c.records == 3238 and c.rejected == []
    reports = [e for e in c.events if isinstance(e, InjuryReported)]
    assert len(reports) == 3238 and {r.week for r in reports} == {1, 2, 3, 5, 6, 7, 8, 9, 10}  # no week 4 in the source
    first = reports[0]  # line 2: practice_status is a quoted line break and spaces
    assert (first.status, first.detail, first.practice, first.game_day) == ("Out", "Knee", None, "out")
    assert first.reported_at == datetime(2024, 9, 8, 18, 35, 57, tzinfo=timezone.utc) == first.source_ts
    assert all(r.game_id is not None for r in reports)
    assert sum(1 for r in reports if r.practice is None) >= 354


def test_every_injury_report_status_is_mapped_to_words_and_a_game_day(resolver_with_games):
    """Issue 20 item 8: a designation in words on every report, and game_day active, inactive
    or out, for every value the file uses, counted against the file itself."""
    resolver, _ = resolver_with_games
    path = SAMPLES / "injuries_2024_weeks01-10.csv"
    with open(path, newline="") as f:
        source = Counter(r["report_status"].strip() for r in csv.DictReader(f))
    assert set(source) == {"", "Questionable", "Out", "Doubtful", "Note"}
    reports = [e for e in collect(nflverse_injuries.parse(path, NOW).items, resolver).events
               if isinstance(e, InjuryReported)]
    served = Counter((r.status, r.game_day) for r in reports)
    assert served == {
        ("Not designated", "active"): source[""],  # practice-report only: no game status was given
        ("Questionable", "active"): source["Questionable"],
        ("Doubtful", "inactive"): source["Doubtful"],
        ("Out", "out"): source["Out"],
        ("Note", "active"): source["Note"],
    }


def test_injury_rows_report_the_line_they_start_on(tmp_path):
    header = (SAMPLES / "injuries_2024_weeks01-10.csv").read_text().splitlines()[0]
    rows = [header,
            '2024,REG,ARI,1,00-0035629,T,Jonah Williams,Jonah,Williams,Knee,,Out,,,"\n    ",2024-09-08T18:35:57Z',
            '2024,REG,ARI,1,00-0039521,WR,Xavier Weaver,Xavier,Weaver,Oblique,,Out,,,,not-a-time']
    c = collect(nflverse_injuries.parse(write(tmp_path, "i.csv", rows), NOW).items, MemoryResolver())
    (bad,) = c.rejected
    assert bad.location == "line 4" and "date_modified" in bad.reason and bad.raw.endswith("not-a-time")
    assert len([e for e in c.events if isinstance(e, InjuryReported)]) == 1


def test_teams_once_per_file(resolver_with_games):
    _, games = resolver_with_games
    teams = [e for e in games.events if isinstance(e, TeamRegistered)]
    assert len({t.team_id for t in teams}) == 32 == len(teams)
    was = next(t for t in teams if t.abbreviation == "WAS")
    assert was.name == "Washington Commanders" and "Washington Football Team" in was.aliases


def test_designations_and_team_changes_are_news(resolver_with_games):
    resolver, _ = resolver_with_games
    c = collect(nflverse_injuries.parse(SAMPLES / "injuries_2024_weeks01-10.csv", NOW).items, resolver)
    news = [e for e in c.events if isinstance(e, NewsPublished)]
    assert Counter(n.kind for n in news) == {"injury": 1750, "transaction": 6}  # 923 Q + 717 Out + 110 D
    assert news[0].headline == "Jonah Williams (knee) out for week 1"
    assert news[0].published_at == news[0].source_ts == datetime(2024, 9, 8, 18, 35, 57, tzinfo=timezone.utc)
    adams = [n for n in news if n.kind == "transaction" and n.headline.startswith("Davante Adams")]
    assert [n.headline for n in adams] == ["Davante Adams now with the New York Jets"]
    assert all("\n" not in n.headline and len(n.headline) <= 200 for n in news)
