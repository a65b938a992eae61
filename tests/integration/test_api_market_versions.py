"""GET /v1/markets/{id} keeps details by the read models' version (change notifications) and by the
versions of the market's, its game's and its lines' rows: a change to any of them or a removed
line is served within moments of its commit (at once while the process is not listening);
another devig method is another detail."""

from __future__ import annotations

import asyncpg

from litestar.testing import AsyncTestClient

from api.app import create_app
from infra.settings import load_settings
from schemas.datasets import pg_schema
from schemas.natural_keys import market_id
from tests.conftest import with_database
from tests.support.api_fixtures import KEY_SECRET, _clone, _drop, make_key
from tests.support.listening import eventually, stop_listening

SCHEMA = pg_schema("live")


async def _detail(api, mid: str, **params) -> dict:
    r = await api.get(f"/v1/markets/{mid}", params=params)
    assert r.status_code == 200, r.text
    return r.json()


def _same(a: dict, b: dict) -> bool:
    return {k: v for k, v in a.items() if k != "request_id"} == {k: v for k, v in b.items() if k != "request_id"}


async def _changes_are_served(api, api_db, sample, fetch_after_change) -> None:
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
        held = await fetch_after_change(mid, {}, lambda d: d["main_line"]["hold"] == 0.5)
        await conn.execute(f"DELETE FROM {SCHEMA}.market_lines WHERE market_id = $1 AND point = $2", mid,
                           alternate["point"])
        fewer = await fetch_after_change(
            mid, {}, lambda d: len(d["alternate_lines"]) == len(before["alternate_lines"]) - 1)
        await conn.execute(f"UPDATE {SCHEMA}.markets SET status = 'suspended' WHERE id = $1", mid)
        suspended = await fetch_after_change(mid, {}, lambda d: d["status"] == "suspended")
        await conn.execute(f"UPDATE {SCHEMA}.games SET name = 'Renamed Game' WHERE id = $1", sample.opener.game_id)
        renamed = await fetch_after_change(mid, {"devig": "shin"}, lambda d: d["game"]["name"] == "Renamed Game")
    finally:
        await conn.close()

    assert before["main_line"]["hold"] != 0.5 and held["main_line"]["hold"] == 0.5
    assert len(fewer["alternate_lines"]) == len(before["alternate_lines"]) - 1
    assert alternate["point"] not in [line["point"] for line in fewer["alternate_lines"]]
    assert fewer["main_line"]["hold"] == 0.5 and fewer["status"] == before["status"] != "suspended"
    assert suspended["status"] == "suspended"
    assert renamed["game"]["name"] == "Renamed Game" and renamed["devig"]["method"] == "shin"
    assert renamed["status"] == "suspended" and len(renamed["alternate_lines"]) == len(fewer["alternate_lines"])


async def test_changes_to_the_market_its_game_or_its_lines_are_served_within_moments(api, api_db, sample):
    async def notified(mid, params, accept):
        return await eventually(lambda: _detail(api, mid, **params), accept)

    await _changes_are_served(api, api_db, sample, notified)


async def test_while_not_listening_changes_are_served_by_the_very_next_call(
    pg_server, sample_template, tmp_path, monkeypatch, sample,
):
    # a database of its own: the module's other test changes the same market
    name = await _clone(pg_server, sample_template)
    db = with_database(pg_server, name)
    try:
        key = await make_key(db, "fallback")
        settings = load_settings(env={}, use_stack=False, data_dir=tmp_path, database_url=db, key_secret=KEY_SECRET)
        front = create_app(settings)
        async with AsyncTestClient(app=front) as client:
            client.headers["Authorization"] = f"Bearer {key}"
            await stop_listening(front, db, monkeypatch)

            async def at_once(mid, params, accept):
                detail = await _detail(client, mid, **params)
                assert accept(detail)
                return detail

            await _changes_are_served(client, db, sample, at_once)
    finally:
        await _drop(pg_server, name)
