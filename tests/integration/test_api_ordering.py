"""docs/architecture.md invariant 7: no list is ever ordered by a betting measure. This module
rewrites every price in its own copy of the read models."""

from __future__ import annotations

import asyncpg

from tests.support.sample_fold import nfl_game_id


async def test_list_order_is_independent_of_prices(api, api_db, sample):
    """Reversing every price and probability changes no list's order (never ordered by
    a betting measure)."""
    week = {"competition": "nfl", "season": "2024", "week": 1}
    gid = nfl_game_id(next(g for g in sample.schedule if g["game_id"] == "2024_01_BAL_KC"))

    async def orders() -> tuple:
        games = [g["id"] for g in (await api.get("/v1/games", params=week)).json()["data"]]
        slate = [g["id"] for g in (await api.get("/v1/slate", params={"date": "2024-09-08"})).json()["data"]]
        markets = [m["id"] for m in (await api.get("/v1/markets", params={"game_id": gid})).json()["data"]]
        search = [s["id"] for s in (await api.get("/v1/search", params={"q": "Kansas City", "limit": 10})).json()["data"]]
        return games, slate, markets, search

    before = await orders()
    conn = await asyncpg.connect(api_db)
    try:
        await conn.execute(
            """
            UPDATE live.market_lines SET hold = -hold, books = 100 - books, outcomes = (
                SELECT jsonb_agg(o || jsonb_build_object('price', 100 - (o->>'price')::float8,
                    'probability', jsonb_build_object('multiplicative', 1 - (o->'probability'->>'multiplicative')::float8)))
                FROM jsonb_array_elements(outcomes) o)
            """
        )
        await conn.execute("UPDATE live.markets SET books = 100 - books, main_point = -main_point")
        after = await orders()
    finally:
        await conn.close()
    assert after == before
    assert all(before)
