"""GET /v1/markets/{id} keeps details by the versions of the market's, its game's and its lines'
rows: a change to any of them, a removed line, or another devig method is served at once."""

from __future__ import annotations

import asyncpg

from schemas.datasets import pg_schema
from schemas.natural_keys import market_id
from tests.support.api_fixtures import *  # noqa: F403

SCHEMA = pg_schema("live")


async def _detail(api, mid: str, **params) -> dict:
    r = await api.get(f"/v1/markets/{mid}", params=params)
    assert r.status_code == 200, r.text
    return r.json()


def _same(a: dict, b: dict) -> bool:
    return {k: v for k, v in a.items() if k != "request_id"} == {k: v for k, v in b.items() if k != "request_id"}


async def test_changes_to_the_market_its_game_or_its_lines_are_served_at_once(api, api_db, sample):
    mid = market_id(sample.opener.game_id, "game", "spreads", "full", None)
    before = await _detail(api, mid)
    again = await _detail(api, mid)
    assert _same(before, again) and before["request_id"] != again["request_id"]
    assert before["alternate_lines"], "the opener's spreads have alternate lines"
    shin = await _detail(api, mid, devig="shin")
    assert shin["devig"]["method"] == "shin" and not _same(shin, before)

    alternate = before["alternate_lines"][0]
    conn = await asyncpg.connect(api_db)
    try:
        await conn.execute(f"UPDATE {SCHEMA}.market_lines SET hold = 0.5 WHERE market_id = $1 AND is_main", mid)
        held = await _detail(api, mid)
        await conn.execute(f"DELETE FROM {SCHEMA}.market_lines WHERE market_id = $1 AND point = $2", mid,
                           alternate["point"])
        fewer = await _detail(api, mid)
        await conn.execute(f"UPDATE {SCHEMA}.markets SET status = 'suspended' WHERE id = $1", mid)
        suspended = await _detail(api, mid)
        await conn.execute(f"UPDATE {SCHEMA}.games SET name = 'Renamed Game' WHERE id = $1", sample.opener.game_id)
        renamed = await _detail(api, mid, devig="shin")
    finally:
        await conn.close()

    assert before["main_line"]["hold"] != 0.5 and held["main_line"]["hold"] == 0.5
    assert len(fewer["alternate_lines"]) == len(before["alternate_lines"]) - 1
    assert alternate["point"] not in [line["point"] for line in fewer["alternate_lines"]]
    assert fewer["main_line"]["hold"] == 0.5 and fewer["status"] == before["status"] != "suspended"
    assert suspended["status"] == "suspended"
    assert renamed["game"]["name"] == "Renamed Game" and renamed["devig"]["method"] == "shin"
    assert renamed["status"] == "suspended" and len(renamed["alternate_lines"]) == len(fewer["alternate_lines"])
