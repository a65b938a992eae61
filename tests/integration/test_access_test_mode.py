"""Test mode: a `svc_test_` key reads only the sandbox read models; live keys and key-less callers
read only `live`. Distinct rows go into `live.games` and `test.games`; a read route returns them."""

from __future__ import annotations

import asyncpg
import msgspec

from tests.integration.access_support import make_key, redis_url, serving  # noqa: F401

LIVE_IDS = ["gm_live0000000000000001", "gm_live0000000000000002"]
TEST_IDS = ["gm_test0000000000000001"]


async def _insert_games(url: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        for schema, ids in (("live", LIVE_IDS), ("test", TEST_IDS)):
            for game_id in ids:
                await conn.execute(
                    f"INSERT INTO {schema}.games (id, name, sport, competition, kickoff_sort, home_team_id, away_team_id,"
                    " source, as_of, provenance) VALUES ($1, $2, 'american_football', 'nfl', now(), 'tm_a', 'tm_b',"
                    " 'nflverse', now(), '{}'::jsonb)",
                    game_id, f"{schema} game {game_id}",
                )
    finally:
        await conn.close()


async def test_test_keys_see_only_the_sandbox_and_live_callers_only_live(settings, redis_url):  # noqa: F811
    settings = msgspec.structs.replace(settings, redis_url=redis_url)
    await _insert_games(settings.database_url)
    live_key = await make_key(settings, "acme", "free", {"read:odds"}, mode="live")
    test_key = await make_key(settings, "acme", "free", {"read:odds"}, mode="test")
    async with serving(settings) as served:
        seen = {}
        for who, key in (("anonymous", None), ("live", live_key), ("test", test_key)):
            async with served.client(key=key) as c:
                r = await c.get("/v1/_test/games")
                assert r.status_code == 200, r.text
                seen[who] = r.json()
                status = (await c.get("/v1/status")).json()
                assert status["mode"] == ("test" if who == "test" else "live")
    assert seen["anonymous"] == {"dataset": "live", "ids": LIVE_IDS}
    assert seen["live"] == {"dataset": "live", "ids": LIVE_IDS}
    assert seen["test"] == {"dataset": "test", "ids": TEST_IDS}
    assert not set(seen["test"]["ids"]) & set(LIVE_IDS) and not set(seen["live"]["ids"]) & set(TEST_IDS)
