"""GET /v1/search: best match first, close spellings found, kind and competition filters."""

from __future__ import annotations

from schemas.natural_keys import competition_id
from tests.support.sample_fold import nfl_player, nfl_team


async def test_misspelt_names_find_players_and_teams_best_first(api):
    r = await api.get("/v1/search", params={"q": "Mahomse"})
    assert r.status_code == 200, r.text
    first = r.json()["data"][0]
    assert first == {
        "object": "search_result", "id": nfl_player("00-0033873"), "kind": "player", "name": "Patrick Mahomes",
        "context": {"position": "QB", "team": "Kansas City Chiefs", "team_id": nfl_team("KC")},
    }
    kc = (await api.get("/v1/search", params={"q": "Kanas City"})).json()["data"]
    assert kc[0]["id"] == nfl_team("KC") and kc[0]["kind"] == "team"
    assert kc[0]["context"] == {"competition": "nfl", "abbreviation": "KC"}
    spurs = (await api.get("/v1/search", params={"q": "Totenham Hotspur"})).json()["data"]
    assert spurs[0]["name"] == "Tottenham Hotspur" and spurs[0]["kind"] == "team"
    league = (await api.get("/v1/search", params={"q": "premier leage"})).json()["data"]
    assert league[0]["id"] == competition_id("epl") and league[0]["context"] == {"sport": "soccer"}


async def test_kind_and_competition_filters(api):
    games = (await api.get("/v1/search", params={"q": "Kansas City Chiefs", "kind": "game", "limit": 10})).json()["data"]
    assert len(games) == 10 and all(g["kind"] == "game" for g in games)
    assert all("Kansas City Chiefs" in (g["context"]["home_team"], g["context"]["away_team"]) for g in games)
    assert set(games[0]["context"]) == {"home_team", "away_team", "season", "week", "kickoff_at"}
    epl = (await api.get("/v1/search", params={"q": "Tottenham", "competition": "epl"})).json()["data"]
    assert epl and all(r["id"].startswith(("tm_", "gm_")) for r in epl)
    by_id = (await api.get("/v1/search", params={"q": "Tottenham", "competition": competition_id("epl")})).json()["data"]
    assert [r["id"] for r in by_id] == [r["id"] for r in epl]
    assert (await api.get("/v1/search", params={"q": "Tottenham", "competition": "nfl"})).json()["data"] == []
    # library entries are served by the reference library; none are indexed in this sample
    assert (await api.get("/v1/search", params={"q": "Tottenham", "kind": "reference"})).json()["data"] == []


async def test_paging_and_validation(api):
    first = (await api.get("/v1/search", params={"q": "Kansas City", "limit": 3})).json()
    assert len(first["data"]) == 3 and first["has_more"]
    second = (await api.get("/v1/search", params={"q": "Kansas City", "limit": 3, "cursor": first["next_cursor"]})).json()
    both = (await api.get("/v1/search", params={"q": "Kansas City", "limit": 6})).json()
    assert [r["id"] for r in first["data"] + second["data"]] == [r["id"] for r in both["data"]]
    changed = await api.get("/v1/search", params={"q": "Chiefs", "limit": 3, "cursor": first["next_cursor"]})
    assert changed.status_code == 400 and changed.json()["param"] == "cursor"
    for params, param in (
        ({"q": "x", "kind": "bet"}, "kind"), ({"q": ""}, "q"), ({"q": "x" * 201}, "q"), ({}, "q"),
        ({"q": "x", "limit": 11}, "limit"), ({"q": "x", "limit": 0}, "limit"), ({"q": "x", "competition": "NFL"}, "competition"),
        ({"q": "a\x00b"}, "q"), ({"q": "x", "cursor": "x" * 513}, "cursor"),
    ):
        r = await api.get("/v1/search", params=params)
        assert r.status_code == 400 and r.json()["code"] == "invalid_request" and r.json()["param"] == param, params
    nothing = await api.get("/v1/search", params={"q": "%%%"})
    assert nothing.status_code == 200 and nothing.json()["data"] == []
