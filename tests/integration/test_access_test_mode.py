"""Test mode: a `svc_test_` key reads only the sandbox read models; live keys and key-less callers
read only `live`. Distinct rows go into `live.games` and `test.games`; the real read routes
(GET /v1/games, GET /v1/games/{game_id}) must return each caller its own dataset's rows only."""

from __future__ import annotations

from datetime import datetime, timezone

import msgspec

from infra.db import connect
from schemas.read_models import KnownProvenance
from domain.ids import natural_id
from tests.integration.access_support import make_key, serving

LIVE_IDS = sorted(natural_id("game", "access-test", "live", n) for n in range(2))
TEST_IDS = [natural_id("game", "access-test", "test", 0)]
# the provenance a game row holds, shaped by its record model (the reader decodes it as one)
PROVENANCE = msgspec.to_builtins(KnownProvenance(
    source="nflverse", source_ts=datetime(2024, 9, 8, 17, tzinfo=timezone.utc),
    ingest_ts=datetime(2024, 9, 8, 17, 0, 1, tzinfo=timezone.utc), known_by=[]))


async def _insert_games(url: str) -> None:
    conn = await connect(url)  # JSON columns take Python objects
    try:
        for schema, ids in (("live", LIVE_IDS), ("test", TEST_IDS)):
            for team in ("tm_a", "tm_b"):
                await conn.execute(
                    f"INSERT INTO {schema}.teams (id, sport, competition, name, source, as_of, provenance)"
                    " VALUES ($1, 'american_football', 'nfl', $1, 'nflverse', now(), $2)", team, PROVENANCE,
                )
            for n, game_id in enumerate(ids):
                await conn.execute(
                    f"INSERT INTO {schema}.games (id, name, sport, competition, kickoff_at, kickoff_sort, home_team_id,"
                    " away_team_id, source, as_of, provenance) VALUES ($1, $2, 'american_football', 'nfl',"
                    " '2024-09-08T17:00:00Z'::timestamptz + make_interval(hours => $3),"
                    " '2024-09-08T17:00:00Z'::timestamptz + make_interval(hours => $3), 'tm_a', 'tm_b', 'nflverse',"
                    " now(), $4)",
                    game_id, f"{schema} game {n}", n, PROVENANCE,
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
                r = await c.get("/v1/games", params={"limit": 50})
                assert r.status_code == 200, r.text
                seen[who] = [g["id"] for g in r.json()["data"]]
                own, other = (TEST_IDS, LIVE_IDS) if who == "test" else (LIVE_IDS, TEST_IDS)
                assert (await c.get(f"/v1/games/{own[0]}")).status_code == 200
                assert (await c.get(f"/v1/games/{other[0]}")).status_code == 404
                assert (await c.get("/v1/status")).json()["mode"] == ("test" if who == "test" else "live")
    assert seen == {"anonymous": LIVE_IDS, "live": LIVE_IDS, "test": TEST_IDS}
