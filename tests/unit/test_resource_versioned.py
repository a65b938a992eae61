"""Resources are kept by the versions of the rows they were built from (a game list item: its
game's and its teams' rows): the same versions give the same shared item, each request gets its
own request ID, changed versions are a new item."""

from __future__ import annotations

from datetime import datetime, timezone

import msgspec

from api.resources.games import game, list_item_key
from api.kept import Versioned

T = datetime(2024, 9, 8, 17, 0, tzinfo=timezone.utc)
PROV = '{"source": "nflverse games", "source_ts": "2024-09-08T17:00:00Z", "ingest_ts": "2024-09-09T00:00:00Z"}'


def row(**changes):
    """A games query row: the game's record columns (JSON columns decoded), its versions, its teams."""
    stored = msgspec.json.decode(PROV)
    base = {
        "id": "gm_0123456789abcdefghjk", "name": "Away at Home", "sport": "american_football", "competition": "nfl",
        "season": "2024", "week": 1, "season_type": "regular", "kickoff_at": T, "kickoff_date": None, "kickoff_sort": T,
        "venue": None, "neutral_site": False, "home_team_id": "tm_h", "away_team_id": "tm_a", "status": "final",
        "score_home": 20, "score_away": 17, "period": "F", "clock": None, "possession": None, "last_play": None,
        "state_provenance": stored, "source": "nflverse games", "as_of": T, "provenance": {**stored, "known_by": []},
        "last_seq": 3, "g_version": 100, "h_version": 7, "a_version": 8,
    }
    for side in ("home", "away"):
        base.update({f"{side}_name": side.title(), f"{side}_abbreviation": side[:3].upper(), f"{side}_competition": "nfl",
                     f"{side}_provenance": PROV, f"{side}_source": "nflverse games", f"{side}_as_of": T})
    base.update(changes)
    return base


def test_the_same_versions_give_the_shared_item_with_each_requests_own_id():
    items = Versioned()
    built = items.put(list_item_key("live", row()), game(row(), None))
    assert items.get(list_item_key("live", row())) is built and built.request_id is None
    first, second = items.for_request(built, "req_1"), items.for_request(built, "req_2")
    assert (first.request_id, second.request_id, built.request_id) == ("req_1", "req_2", None)
    assert msgspec.structs.replace(first, request_id="x") == msgspec.structs.replace(second, request_id="x")
    assert first.live_topics == ["game:gm_0123456789abcdefghjk"]


def test_a_new_version_of_the_game_or_a_team_or_another_schema_is_another_item():
    items = Versioned()
    items.put(list_item_key("live", row()), game(row(), None))
    for changed, schema in ((row(g_version=101), "live"), (row(h_version=9), "live"), (row(a_version=None), "live"),
                            (row(), "test")):
        assert items.get(list_item_key(schema, changed)) is None
    newer_row = row(g_version=101, score_home=27, status="live")
    newer = items.put(list_item_key("live", newer_row), game(newer_row, None))
    assert (newer.score.home, newer.status) == (27, "live")
    assert items.get(list_item_key("live", row())).score.home == 20  # the older version stays as it was


def test_the_store_is_bounded():
    items = Versioned(max_items=3)
    for v in range(5):
        items.put(list_item_key("live", row(g_version=v)), game(row(g_version=v), None))
    assert sum(items.get(list_item_key("live", row(g_version=v))) is not None for v in range(5)) <= 3
    assert items.get(list_item_key("live", row(g_version=4))) is not None


def test_rows_with_team_provenance_decoded_build_items_too():
    # the game's own columns are its record's (JSON decoded); a team's provenance may come as either
    decoded = row(home_provenance=msgspec.json.decode(PROV), away_provenance=msgspec.json.decode(PROV))
    item = game(decoded, "req_9")
    assert item.provenance.source == "nflverse games" and item.request_id == "req_9"
    assert item.home_team.provenance == game(row(), None).home_team.provenance
