"""The team alias table (schemas/team_nicknames.py): every name carries the source it was read
on, and no name points at two teams of one competition."""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from urllib.parse import urlsplit

from ingest.team_aliases import NFL_BY_KEY, fold, soccer_team_key
from schemas.natural_keys import team_id
from schemas.team_nicknames import BY_TEAM_ID, NICKNAMES, Nicknames, Source, nicknames


def test_every_name_has_a_source_with_an_https_url_and_the_day_it_was_checked():
    assert NICKNAMES
    for key, entries in NICKNAMES.items():
        assert entries, key
        for entry in entries:
            assert isinstance(entry, Nicknames) and isinstance(entry.source, Source), key
            assert entry.names and all(name.strip() == name and name for name in entry.names), key
            url = urlsplit(entry.source.url)
            assert url.scheme == "https" and url.netloc, (key, entry.source.url)
            assert date.fromisoformat(entry.source.checked) <= date.today(), key
            if entry.source.published is not None:
                assert date.fromisoformat(entry.source.published) <= date.fromisoformat(entry.source.checked), key
            assert entry.source.publisher.strip() and entry.source.says.strip(), key


def test_no_name_points_at_two_teams_of_a_competition():
    owners: dict[tuple[str, str], set[str]] = defaultdict(set)
    for (competition, key), entries in NICKNAMES.items():
        for entry in entries:
            for name in entry.names:
                owners[(competition, fold(name))].add(key)
    shared = {name: teams for name, teams in owners.items() if len(teams) > 1}
    assert not shared


def test_every_key_is_a_team_s_natural_key():
    # a key no team resolves to would carry names search never uses
    for competition, key in NICKNAMES:
        if competition == "nfl":
            assert key in NFL_BY_KEY, key
        else:
            assert soccer_team_key(competition, key) == key, (competition, key)


def test_the_lookup_by_team_id_holds_every_name_of_the_team():
    assert nicknames(team_id("nfl", "SF")) == ("Niners", "Forty Niners")
    assert "Bucs" in nicknames(team_id("nfl", "TB"))
    assert nicknames("tm_not_a_team") == ()
    assert set(BY_TEAM_ID) == {team_id(c, key) for c, key in NICKNAMES}


def test_mocking_names_stay_out():
    # rivals' puns on a team's name: search finds teams by the names people use respectfully
    every = {fold(name) for names in BY_TEAM_ID.values() for name in names}
    assert not every & {"bungals", "iggles", "commies"}
