"""GET /v1/games keeps list items by the versions of their rows: a change to a game or to one of
its teams is served at once, unchanged items are served from what was built before."""

from __future__ import annotations

import asyncpg

from schemas.datasets import pg_schema
from tests.support.api_fixtures import *  # noqa: F403

WEEK_1 = {"competition": "nfl", "season": "2024", "week": 1}


async def _week_1(api) -> dict[str, dict]:
    r = await api.get("/v1/games", params=WEEK_1)
    assert r.status_code == 200, r.text
    return {g["id"]: g for g in r.json()["data"]}


def _without_request_id(item: dict) -> dict:
    return {k: v for k, v in item.items() if k != "request_id"}


async def test_a_changed_game_or_team_row_is_served_at_once_and_the_rest_as_before(api, api_db):
    before = await _week_1(api)
    again = await _week_1(api)  # served from the items built by the first call
    assert {k: _without_request_id(v) for k, v in again.items()} == {k: _without_request_id(v) for k, v in before.items()}
    assert len({g["request_id"] for g in again.values()} | {g["request_id"] for g in before.values()}) == 2

    game_id, game = next(iter(before.items()))
    schema = pg_schema("live")
    conn = await asyncpg.connect(api_db)
    try:
        await conn.execute(f"UPDATE {schema}.games SET score_home = score_home + 100 WHERE id = $1", game_id)
        after_score = await _week_1(api)
        await conn.execute(f"UPDATE {schema}.teams SET name = 'Renamed Club' WHERE id = $1", game["away_team"]["id"])
        after_team = await _week_1(api)
    finally:
        await conn.close()

    assert after_score[game_id]["score"]["home"] == game["score"]["home"] + 100
    assert after_team[game_id]["score"]["home"] == game["score"]["home"] + 100
    assert after_team[game_id]["away_team"]["name"] == "Renamed Club"
    # every other game of the week that does not involve that team is exactly as before
    others = [g for g, item in before.items()
              if g != game_id and game["away_team"]["id"] not in (item["home_team"]["id"], item["away_team"]["id"])]
    assert len(others) >= 14
    for g in others:
        assert _without_request_id(after_team[g]) == _without_request_id(before[g])
