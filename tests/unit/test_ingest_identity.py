"""Identity resolution: one tm_ per real team whatever a source calls it; the game rules."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ingest.identity import UnknownTeam, nfl_team, season_label, soccer_team, team
from ingest.records import GameClaim, WeekGame
from ingest.resolution import MemoryResolver
from ingest.team_aliases import NFL_FRANCHISES, fold
from schemas import natural_keys


@pytest.mark.parametrize("names, key", [
    (("LV", "OAK", "LVR", "Oakland Raiders", "Las Vegas Raiders", "Raiders", "las vegas  raiders"), "LV"),
    (("LAC", "SD", "San Diego Chargers", "Los Angeles Chargers"), "LAC"),
    (("LA", "LAR", "STL", "St. Louis Rams", "St Louis Rams", "Los Angeles Rams"), "LA"),
    (("WAS", "WSH", "Washington Redskins", "Washington Football Team", "Washington Commanders", "Washington"), "WAS"),
    (("JAX", "JAC", "Jacksonville Jaguars"), "JAX"),
    (("KC", "KAN", "Kansas City Chiefs", "Kansas City"), "KC"),
])
def test_every_name_of_a_franchise_is_one_team(names, key):
    ids = {nfl_team(n).team_id for n in names}
    assert ids == {natural_keys.team_id("nfl", key)}
    assert nfl_team(names[-1]).key == key


def test_teams_registered_under_current_names_with_their_history():
    raiders = nfl_team("Oakland Raiders")
    assert raiders.name == "Las Vegas Raiders" and raiders.abbreviation == "LV"
    assert "Oakland Raiders" in raiders.aliases and "OAK" in raiders.aliases


def test_every_franchise_is_distinct_and_self_resolving():
    ids = {nfl_team(f.key).team_id for f in NFL_FRANCHISES} | {nfl_team(f.name).team_id for f in NFL_FRANCHISES}
    assert len(ids) == 32


def test_ambiguous_city_and_unknown_names_are_refused():
    with pytest.raises(UnknownTeam):
        nfl_team("Los Angeles")  # two teams play there
    with pytest.raises(UnknownTeam):
        nfl_team("Springfield Isotopes")


def test_soccer_clubs_by_normalised_name_per_competition():
    assert soccer_team("epl", "Brighton & Hove Albion").team_id == soccer_team("epl", "Brighton and Hove Albion").team_id
    assert soccer_team("epl", "Wolves").team_id == soccer_team("epl", "Wolverhampton Wanderers").team_id
    assert soccer_team("serie_a", "Atalanta BC").team_id == soccer_team("serie_a", "Atalanta").team_id
    assert soccer_team("serie_a", "AC Milan").team_id != soccer_team("serie_a", "Inter Milan").team_id
    assert soccer_team("serie_a", "Hellas Verona FC").key == "hellas verona"
    # the same club name in two competitions is two teams (IDs are per competition)
    assert soccer_team("epl", "Arsenal").team_id != soccer_team("serie_a", "Arsenal").team_id
    assert team("epl", "Arsenal").name == "Arsenal"


@given(st.text(max_size=40))
def test_folding_is_idempotent(name):
    assert fold(fold(name)) == fold(name)


def test_season_labels():
    assert season_label("nfl", date(2024, 9, 8)) == "2024"
    assert season_label("nfl", date(2025, 2, 9)) == "2024"  # the Super Bowl belongs to the season before
    assert season_label("epl", date(2024, 8, 19)) == "2024-25"
    assert season_label("serie_a", date(2022, 1, 6)) == "2021-22"


KC, DET = natural_keys.team_id("nfl", "KC"), natural_keys.team_id("nfl", "DET")
KICKOFF = datetime(2023, 9, 8, 0, 20, tzinfo=timezone.utc)  # Thursday 20:20 in New York


def claim(source, source_id, kickoff, **kw) -> GameClaim:
    return GameClaim(source, source_id, "nfl", KC, DET, kickoff, None, **kw)


def test_a_game_from_another_source_matches_within_the_window_closest_first():
    r = MemoryResolver()
    ours = r.claim(claim("nflverse", "2023_01_DET_KC", KICKOFF, season="2023", week=1)).game_id
    assert ours == natural_keys.game_id("nfl", KC, DET, date(2023, 9, 7))
    # the feed says 00:21 UTC: another day in UTC, same game
    assert r.claim(claim("odds", "abc", KICKOFF + timedelta(minutes=1))).game_id == ours
    # a day and a half later still the same game; beyond the window a new one
    assert r.claim(claim("odds", "later", KICKOFF + timedelta(hours=35))).game_id == ours
    far = r.claim(claim("odds", "far", KICKOFF + timedelta(hours=40))).game_id
    assert far != ours and far == natural_keys.game_id("nfl", KC, DET, date(2023, 9, 9))
    # swapped home and away is another game
    swapped = GameClaim("odds", "swap", "nfl", DET, KC, KICKOFF, None)
    assert r.claim(swapped).game_id != ours


def test_a_source_keeps_its_game_when_it_moves_it_and_says_so():
    r = MemoryResolver()
    first = r.claim(claim("nflverse", "g1", KICKOFF))
    assert not first.seen_before
    moved = r.claim(claim("nflverse", "g1", KICKOFF + timedelta(days=3)))
    assert moved.game_id == first.game_id and moved.seen_before and moved.kickoff_at == KICKOFF
    again = r.claim(claim("nflverse", "g1", KICKOFF + timedelta(days=3)))
    assert again.kickoff_at == KICKOFF + timedelta(days=3)


def test_week_lookup_finds_the_game_of_either_team():
    r = MemoryResolver()
    game = r.claim(claim("nflverse", "g1", KICKOFF, season="2023", week=1)).game_id
    for t in (KC, DET):
        found = r.week(WeekGame("nfl", "2023", 1, t))
        assert found is not None and found.game_id == game and found.kickoff_at == KICKOFF
    assert r.week(WeekGame("nfl", "2023", 2, KC)) is None
    assert r.week(WeekGame("nfl", "2023", 1, natural_keys.team_id("nfl", "BUF"))) is None


def test_found_teams_are_kept_bounded_and_unknown_names_refused_each_time(monkeypatch):
    from ingest import identity

    monkeypatch.setattr(identity, "_TEAMS_MAX", 3)
    identity._TEAMS.clear()
    names = ["Kansas City Chiefs", "KC", "Buffalo Bills", "BUF", "Green Bay Packers"]
    for _ in range(2):
        for name in names:
            assert identity.team("nfl", name) == identity.nfl_team(name)  # kept or not: the same team
            assert 0 < len(identity._TEAMS) <= 3
    for _ in range(2):
        with pytest.raises(identity.UnknownTeam, match="unknown NFL team 'Nobody FC'"):
            identity.team("nfl", "Nobody FC")
    assert ("nfl", "Nobody FC") not in identity._TEAMS
    assert identity.team("epl", "  Arsenal\u202e ") == identity.soccer_team("epl", "  Arsenal\u202e ")
