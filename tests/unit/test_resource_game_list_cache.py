"""List items are built once per distinct row and shared: a changed row is a new item, and each
request still gets its own request ID and topics."""

from __future__ import annotations

from datetime import datetime, timezone

import msgspec

from api.resources.games import game

T = datetime(2024, 9, 8, 17, 0, tzinfo=timezone.utc)
PROV = '{"source": "nflverse games", "source_ts": "2024-09-08T17:00:00Z", "ingest_ts": "2024-09-09T00:00:00Z"}'


def row(**changes):
    base = {
        "id": "gm_0123456789abcdefghjk", "name": "Away at Home", "sport": "american_football", "competition": "nfl",
        "season": "2024", "week": 1, "season_type": "regular", "kickoff_at": T, "kickoff_date": None, "kickoff_sort": T,
        "venue": None, "home_team_id": "tm_h", "away_team_id": "tm_a", "status": "final", "score_home": 20,
        "score_away": 17, "period": "F", "clock": None, "possession": None, "last_play": None,
        "state_provenance": PROV, "source": "nflverse games", "as_of": T, "provenance": PROV,
    }
    for side in ("home", "away"):
        base.update({f"{side}_name": side.title(), f"{side}_abbreviation": side[:3].upper(), f"{side}_competition": "nfl",
                     f"{side}_provenance": PROV, f"{side}_source": "nflverse games", f"{side}_as_of": T})
    base.update(changes)
    return base


def test_the_same_row_gives_equal_items_with_each_requests_own_id():
    first, second = game(row(), "req_1"), game(row(), "req_2")
    assert (first.request_id, second.request_id) == ("req_1", "req_2")
    assert msgspec.structs.replace(first, request_id="x") == msgspec.structs.replace(second, request_id="x")
    assert first.live_topics == ["game:gm_0123456789abcdefghjk"] and first.live_topics is not second.live_topics


def test_a_changed_row_is_a_new_item():
    before = game(row(), "req_1")
    after = game(row(score_home=27, status="live"), "req_1")
    assert (before.score.home, before.status) == (20, "final")
    assert (after.score.home, after.status) == (27, "live")
    assert game(row(), "req_3").score.home == 20


def test_rows_with_decoded_json_are_built_without_the_cache():
    decoded = row(provenance=msgspec.json.decode(PROV), state_provenance=msgspec.json.decode(PROV))
    item = game(decoded, "req_9")
    assert item.provenance.source == "nflverse games" and item.request_id == "req_9"
