"""GET /v1/sports and GET /v1/competitions."""

from __future__ import annotations

from domain.ids import is_id
from schemas.natural_keys import competition_id, season_id, sport_id


async def test_sports_on_one_page_by_slug_with_their_competitions(api):
    r = await api.get("/v1/sports")
    assert r.status_code == 200, r.text
    page = r.json()
    assert page["has_more"] is False and page["next_cursor"] is None
    assert [s["slug"] for s in page["data"]] == ["american_football", "soccer"]
    football, soccer = page["data"]
    assert football["id"] == sport_id("american_football") and football["object"] == "sport"
    assert football["competitions"] == [{"id": competition_id("nfl"), "slug": "nfl", "name": "NFL"}]
    assert [c["slug"] for c in soccer["competitions"]] == ["epl", "serie_a"]
    assert all(s["rg_line"] is None and s["live_topics"] == [] and s["source"] for s in page["data"])


async def test_competitions_with_seasons_newest_first_and_sport_filter(api):
    page = (await api.get("/v1/competitions")).json()
    assert [c["slug"] for c in page["data"]] == ["epl", "nfl", "serie_a"]
    nfl = next(c for c in page["data"] if c["slug"] == "nfl")
    assert nfl["sport"] == "american_football" and is_id("competition", nfl["id"])
    # the schedule's seasons, and the 2021 and 2022 games The Odds API files price
    assert [s["label"] for s in nfl["seasons"]] == ["2025", "2024", "2023", "2022", "2021"]
    assert nfl["seasons"][1] == {
        "id": season_id("nfl", "2024"), "label": "2024", "year": 2024, "starts_on": "2024-09-05", "ends_on": "2025-02-09",
    }
    soccer = (await api.get("/v1/competitions", params={"sport": "soccer"})).json()["data"]
    assert [c["slug"] for c in soccer] == ["epl", "serie_a"]
    assert soccer[0]["seasons"][0]["label"] == "2024-25"
    assert (await api.get("/v1/competitions", params={"sport": "curling"})).json()["data"] == []


async def test_competition_pages_and_cursor_binding(api):
    first = (await api.get("/v1/competitions", params={"limit": 2})).json()
    assert [c["slug"] for c in first["data"]] == ["epl", "nfl"] and first["has_more"]
    second = (await api.get("/v1/competitions", params={"limit": 2, "cursor": first["next_cursor"]})).json()
    assert [c["slug"] for c in second["data"]] == ["serie_a"] and not second["has_more"]
    moved = await api.get("/v1/competitions", params={"limit": 2, "sport": "soccer", "cursor": first["next_cursor"]})
    assert moved.status_code == 400 and moved.json()["param"] == "cursor"
    for params, param in (({"sport": "Soccer"}, "sport"), ({"limit": 51}, "limit"), ({"sport": "x" * 42}, "sport")):
        r = await api.get("/v1/competitions", params=params)
        assert r.status_code == 400 and r.json()["param"] == param, params
