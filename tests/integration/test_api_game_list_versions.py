"""GET /v1/games keeps pages by the read models' version (change notifications) and list items by
the versions of their rows: a change to a game or to one of its teams is served within moments
of its commit (at once while the process is not listening), unchanged items as built before."""

from __future__ import annotations

import asyncpg

from litestar.testing import AsyncTestClient

from api.app import create_app
from schemas.datasets import pg_schema
from tests.support.listening import eventually, stop_listening

WEEK_1 = {"competition": "nfl", "season": "2024", "week": 1}


async def _week_1(api) -> dict[str, dict]:
    r = await api.get("/v1/games", params=WEEK_1)
    assert r.status_code == 200, r.text
    return {g["id"]: g for g in r.json()["data"]}


def _without_request_id(item: dict) -> dict:
    return {k: v for k, v in item.items() if k != "request_id"}


async def _changes_are_served(api, api_db, fetch_after_change) -> None:
    before = await _week_1(api)
    again = await _week_1(api)  # served from what the first call built
    assert {k: _without_request_id(v) for k, v in again.items()} == {k: _without_request_id(v) for k, v in before.items()}
    assert len({g["request_id"] for g in again.values()} | {g["request_id"] for g in before.values()}) == 2

    game_id, game = next(iter(before.items()))
    schema = pg_schema("live")
    conn = await asyncpg.connect(api_db)
    try:
        await conn.execute(f"UPDATE {schema}.games SET score_home = score_home + 100 WHERE id = $1", game_id)
        after_score = await fetch_after_change(
            lambda page: page[game_id]["score"]["home"] == game["score"]["home"] + 100)
        await conn.execute(f"UPDATE {schema}.teams SET name = 'Renamed Club' WHERE id = $1", game["away_team"]["id"])
        after_team = await fetch_after_change(lambda page: page[game_id]["away_team"]["name"] == "Renamed Club")
        # and back, so the module's other tests read the sample as it was
        await conn.execute(f"UPDATE {schema}.games SET score_home = score_home - 100 WHERE id = $1", game_id)
        await conn.execute(f"UPDATE {schema}.teams SET name = $2 WHERE id = $1", game["away_team"]["id"],
                           game["away_team"]["name"])
        await fetch_after_change(lambda page: _without_request_id(page[game_id]) == _without_request_id(game))
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


async def test_a_changed_game_or_team_row_is_served_within_moments_and_the_rest_as_before(api, api_db):
    async def notified(accept):
        return await eventually(lambda: _week_1(api), accept)

    await _changes_are_served(api, api_db, notified)


async def test_while_not_listening_a_change_is_served_by_the_very_next_call(api_settings, api_keys, api_db, monkeypatch):
    front = create_app(api_settings)
    async with AsyncTestClient(app=front) as client:
        client.headers["Authorization"] = f"Bearer {api_keys['live']}"
        await stop_listening(front, api_db, monkeypatch)

        async def at_once(accept):
            page = await _week_1(client)
            assert accept(page)
            return page

        await _changes_are_served(client, api_db, at_once)


async def test_an_unchanged_page_is_served_without_a_query(api, api_db):
    """While nothing changed (no notification), a kept page is served without asking Postgres:
    with the table renamed away (DDL notifies nothing), a query could only fail."""
    before = await _week_1(api)
    schema = pg_schema("live")
    conn = await asyncpg.connect(api_db)
    try:
        await conn.execute(f"ALTER TABLE {schema}.games RENAME TO games_away")
        try:
            kept = await _week_1(api)
            r = await api.get("/v1/games", params={**WEEK_1, "week": 2})  # never built: must query
            assert r.status_code == 503, r.text
        finally:
            await conn.execute(f"ALTER TABLE {schema}.games_away RENAME TO games")
    finally:
        await conn.close()
    assert {k: _without_request_id(v) for k, v in kept.items()} == {k: _without_request_id(v) for k, v in before.items()}
