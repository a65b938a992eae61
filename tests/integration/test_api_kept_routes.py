"""GET /v1/slate, /v1/games/{id}, /v1/players/{id} and /v1/search keep whole responses by the
read models' version (api/read_cache.py), as /v1/games does: a kept copy is served with no
query while nothing changed; a change to any table a route names is served within moments of
its commit; and a route reads no table it does not name (else a change there would go unseen)."""

from __future__ import annotations

import asyncio
from datetime import datetime
from zoneinfo import ZoneInfo

import asyncpg
import httpx
import pytest

from litestar.testing import AsyncTestClient

from api.app import create_app
from api.front import COMPRESS_MIN_BYTES
from api.routes.games import get_game, list_games
from api.routes.markets import get_market
from api.routes.players import get_player
from api.routes.search import search
from api.routes.slate import get_slate
from schemas.datasets import pg_schema
from tests.integration.access_support import lifespan
from tests.support.listening import eventually, listener_of, stop_listening
from tests.support.sample_fold import nfl_player, nfl_team

SCHEMA = pg_schema("live")
TREMBLE = nfl_player("00-0037005")  # Tommy Tremble, Carolina: injury reports, news, stat lines
HANDLERS = {"slate": get_slate, "game": get_game, "player": get_player, "search": search}
# the routes kept before these (their own tests: test_api_game_list_versions.py, test_api_market_versions.py)
EARLIER = {"games": list_games, "market": get_market}


def _same(a: dict, b: dict) -> bool:
    """Equal but for request IDs (every response and resource carries its own)."""
    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k != "request_id"}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x
    return strip(a) == strip(b)


async def _paths(api, sample) -> dict[str, tuple[str, dict]]:
    """A request per route, on rows the sample holds: the 2022 opener's day and game, a player
    with everything, a team's name as people type it."""
    r = await api.get(f"/v1/games/{sample.opener.game_id}")
    assert r.status_code == 200, r.text
    game = r.json()
    kickoff = datetime.fromisoformat(game["kickoff_at"].replace("Z", "+00:00"))
    day = kickoff.astimezone(ZoneInfo("America/New_York")).date().isoformat()
    return {
        "slate": ("/v1/slate", {"date": day, "tz": "America/New_York"}),
        "game": (f"/v1/games/{sample.opener.game_id}", {}),
        "player": (f"/v1/players/{TREMBLE}", {}),
        "search": ("/v1/search", {"q": "carolina", "limit": 10}),
        # the opener's season (The Odds API gives no week: the read models have none for it)
        "games": ("/v1/games", {"competition": "nfl", "season": game["season"]}),
        "market": (f"/v1/markets/{game['markets'][0]['id']}", {}),
    }


async def _get(api, path: str, params: dict) -> dict:
    r = await api.get(path, params=params)
    assert r.status_code == 200, r.text
    return r.json()


async def _tables(conn) -> list[str]:
    return [r["tablename"] for r in await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = $1", SCHEMA)]


async def _rename_away(conn, tables) -> None:
    async with conn.transaction():
        for t in tables:
            await conn.execute(f'ALTER TABLE {SCHEMA}."{t}" RENAME TO "{t}_away"')


async def _rename_back(conn, tables) -> None:
    async with conn.transaction():
        for t in tables:
            await conn.execute(f'ALTER TABLE {SCHEMA}."{t}_away" RENAME TO "{t}"')


@pytest.mark.parametrize("route", sorted(HANDLERS | EARLIER))
async def test_a_kept_response_is_served_without_a_query(api, api_db, sample, route):
    """With every read-model table renamed away (DDL notifies nothing), a query could only fail."""
    path, params = (await _paths(api, sample))[route]
    before = await _get(api, path, params)
    conn = await asyncpg.connect(api_db)
    try:
        tables = await _tables(conn)
        await _rename_away(conn, tables)
        try:
            kept = await _get(api, path, params)
        finally:
            await _rename_back(conn, tables)
    finally:
        await conn.close()
    assert _same(kept, before)


@pytest.mark.parametrize("route", sorted(HANDLERS | EARLIER))
async def test_a_route_reads_no_table_it_does_not_name(api_settings, api_keys, api_db, sample, monkeypatch, route):
    """Not listening, every call runs the route: with every other read-model table renamed away
    it still answers, and answers the same."""
    named = {t.split(".")[0] for t in (HANDLERS | EARLIER)[route].opt["read_tables"]}  # a part names its table
    front = create_app(api_settings)
    async with AsyncTestClient(app=front) as client:
        client.headers["Authorization"] = f"Bearer {api_keys['live']}"
        path, params = (await _paths(client, sample))[route]
        before = await _get(client, path, params)
        await stop_listening(front, api_db, monkeypatch)
        conn = await asyncpg.connect(api_db)
        try:
            others = [t for t in await _tables(conn) if t not in named]
            assert named <= set(await _tables(conn))
            await _rename_away(conn, others)
            try:
                r = await client.get(path, params=params)
            finally:
                await _rename_back(conn, others)
        finally:
            await conn.close()
    assert r.status_code == 200, r.text
    assert _same(r.json(), before)


# per route: (a named table, a statement changing it, its arguments, what the response shows after it)
def _changes(route: str, before: dict) -> list[tuple[str, str, tuple, object]]:
    if route in ("slate", "game"):
        game = before["data"][0] if route == "slate" else before
        pick = (lambda b: b["data"][0]) if route == "slate" else (lambda b: b)
        market = game["markets"][0]
        return [
            ("games", f"UPDATE {SCHEMA}.games SET score_home = coalesce(score_home, 0) + 100 WHERE id = $1", (game["id"],),
             lambda b: (pick(b)["score"] or {}).get("home") == ((game["score"] or {}).get("home") or 0) + 100),
            ("teams", f"UPDATE {SCHEMA}.teams SET name = 'Renamed Club' WHERE id = $1", (game["home_team"]["id"],),
             lambda b: pick(b)["home_team"]["name"] == "Renamed Club"),
            ("markets", f"UPDATE {SCHEMA}.markets SET name = 'Renamed Market' WHERE id = $1", (market["id"],),
             lambda b: pick(b)["markets"][0]["name"] == "Renamed Market"),
        ]
    if route == "player":
        latest = before["game_lines"][0]["game_id"]
        return [
            ("players", f"UPDATE {SCHEMA}.players SET position = 'QB' WHERE id = $1", (TREMBLE,),
             lambda b: b["position"] == "QB"),
            ("teams", f"UPDATE {SCHEMA}.teams SET name = 'Renamed Club' WHERE id = $1", (nfl_team("CAR"),),
             lambda b: b["team"]["name"] == "Renamed Club"),
            ("injuries", f"UPDATE {SCHEMA}.injuries SET detail = 'Knee' WHERE player_id = $1", (TREMBLE,),
             lambda b: b["injury"]["detail"] == "Knee"),
            ("news", f"UPDATE {SCHEMA}.news SET headline = 'Renamed headline' WHERE player_id = $1", (TREMBLE,),
             lambda b: b["news"][0]["headline"] == "Renamed headline"),
            ("availability", f"UPDATE {SCHEMA}.availability SET status = 'out' WHERE player_id = $1", (TREMBLE,),
             lambda b: b["availability"][0]["status"] == "out"),
            ("stat_lines", f"UPDATE {SCHEMA}.stat_lines SET stats = stats || '{{\"probe\": 7}}' "
             f"WHERE subject_id = $1 AND game_id IS NULL", (TREMBLE,),
             lambda b: all(s["stats"].get("probe") == 7 for s in b["season_lines"])),
            # another of his games kicks off later than the latest one: it is the latest now
            ("games.kickoff", f"UPDATE {SCHEMA}.games SET kickoff_sort = kickoff_sort + interval '100 years' "
             f"WHERE id = (SELECT min(game_id) FROM {SCHEMA}.stat_lines WHERE subject_id = $1 AND game_id <> $2)",
             (TREMBLE, latest), lambda b: b["game_lines"][0]["game_id"] != latest),
        ]
    first = before["data"][0]
    game = next(r for r in before["data"] if r["kind"] == "game")
    return [
        ("search_index", f"UPDATE {SCHEMA}.search_index SET name = 'Renamed Entry' WHERE id = $1", (first["id"],),
         lambda b: any(r["name"] == "Renamed Entry" for r in b["data"])),
        ("teams", f"UPDATE {SCHEMA}.teams SET abbreviation = 'ZZZ' WHERE id = $1", (nfl_team("CAR"),),
         lambda b: any(r["context"].get("abbreviation") == "ZZZ" for r in b["data"])),
        # a game's context comes from its entry (the projector writes both together), not from `games`
        ("search_index", f"UPDATE {SCHEMA}.search_index SET context = jsonb_set(context, '{{week}}', '29') "
         "WHERE id = $1", (game["id"],),
         lambda b: any(r["id"] == game["id"] and r["context"]["week"] == 29 for r in b["data"])),
    ]


@pytest.mark.parametrize("route", sorted(HANDLERS))
async def test_a_change_to_a_named_table_is_served_within_moments(api, api_db, sample, route):
    path, params = (await _paths(api, sample))[route]
    before = await _get(api, path, params)
    again = await _get(api, path, params)
    assert _same(before, again)
    changes = _changes(route, before)
    assert {table for table, *_ in changes} <= set(HANDLERS[route].opt["read_tables"])
    conn = await asyncpg.connect(api_db)
    try:
        for part, sql, args, shows in changes:
            table = part.split(".")[0]
            await conn.execute(f"CREATE TEMP TABLE undo AS SELECT * FROM {SCHEMA}.{table}")
            await conn.execute(sql, *args)
            assert not shows(before), part
            await eventually(lambda: _get(api, path, params), shows)
            # undone: the table as it was, announced like any change
            async with conn.transaction():
                await conn.execute(f"DELETE FROM {SCHEMA}.{table}")
                await conn.execute(f"INSERT INTO {SCHEMA}.{table} SELECT * FROM undo")
                await conn.execute("DROP TABLE undo")
            await eventually(lambda: _get(api, path, params), lambda b: _same(b, before))
    finally:
        await conn.close()


async def test_a_kept_player_is_not_built_again_for_a_score(api, api_db, sample):
    """The player names `games.kickoff`, not `games`: a score change (which rewrites `games`)
    leaves the kept player served with no query, while the change is heard (the game shows it)."""
    path, params = (await _paths(api, sample))["player"]
    before = await _get(api, path, params)
    game_path = (await _paths(api, sample))["game"][0]
    game = await _get(api, game_path, {})
    conn = await asyncpg.connect(api_db)
    try:
        await conn.execute(f"CREATE TEMP TABLE undo AS SELECT * FROM {SCHEMA}.games")
        await conn.execute(f"UPDATE {SCHEMA}.games SET score_home = coalesce(score_home, 0) + 100 WHERE id = $1",
                           game["id"])
        await eventually(lambda: _get(api, game_path, {}),
                         lambda b: (b["score"] or {}).get("home") == ((game["score"] or {}).get("home") or 0) + 100)
        tables = await _tables(conn)
        await _rename_away(conn, tables)
        try:
            kept = await _get(api, path, params)
        finally:
            await _rename_back(conn, tables)
        async with conn.transaction():
            await conn.execute(f"DELETE FROM {SCHEMA}.games")
            await conn.execute(f"INSERT INTO {SCHEMA}.games SELECT * FROM undo")
        # the undo is heard before the next test reads the game (it found the +100 score still kept
        # on one request and the restored one on the next)
        await eventually(lambda: _get(api, game_path, {}), lambda b: _same(b, game))
    finally:
        await conn.close()
    assert _same(kept, before)


@pytest.mark.parametrize("route", sorted(HANDLERS | EARLIER))
async def test_a_kept_response_is_served_gzipped_as_asked_and_varies_by_accept_encoding(api, api_db, sample, route):
    """The kept gzip body (api/kept.py) is the plain body gzipped, with its own length; either form
    says `Vary: Accept-Encoding`; `gzip;q=0` and `identity` get the plain body; HEAD the same
    headers and no body; and after a change, the gzipped form shows it too."""
    path, params = (await _paths(api, sample))[route]
    plain = gzipped = None
    for _ in range(2):  # the first builds (compressed by the front door), the second is the kept copy
        plain = await api.get(path, params=params, headers={"Accept-Encoding": "identity"})
        gzipped = await api.get(path, params=params, headers={"Accept-Encoding": "br, gzip"})
        refused = await api.get(path, params=params, headers={"Accept-Encoding": "gzip;q=0"})
        assert plain.status_code == gzipped.status_code == refused.status_code == 200
        assert "content-encoding" not in plain.headers and "content-encoding" not in refused.headers
        assert _same(gzipped.json(), plain.json()) and _same(refused.json(), plain.json())
        if plain.headers["request-id"] in plain.text:  # its own request ID, spliced into the kept gzip stream
            assert gzipped.headers["request-id"] in gzipped.text
        if len(plain.content) < COMPRESS_MIN_BYTES:  # a market: too small to be worth compressing
            assert "content-encoding" not in gzipped.headers
            continue
        assert gzipped.headers["content-encoding"] == "gzip"
        assert int(gzipped.headers["content-length"]) == gzipped.num_bytes_downloaded < len(plain.content)
        for r in (plain, gzipped, refused):  # built or kept, either form: a shared cache must tell them apart
            assert r.headers.get_list("vary") == ["Accept-Encoding"]
    head = await api.head(path, params=params, headers={"Accept-Encoding": "gzip"})
    assert head.status_code == 200 and head.content == b""
    assert (head.headers.get("content-encoding"), head.headers["content-length"]) == (
        gzipped.headers.get("content-encoding"), gzipped.headers["content-length"])
    table, sql, args, shows = _changes(route, plain.json())[0] if route in HANDLERS else (None,) * 4
    if table is None:
        return
    conn = await asyncpg.connect(api_db)
    try:
        await conn.execute(f"CREATE TEMP TABLE undo AS SELECT * FROM {SCHEMA}.{table}")
        await conn.execute(sql, *args)

        async def get_gzipped() -> dict:
            r = await api.get(path, params=params, headers={"Accept-Encoding": "gzip"})
            assert r.headers["content-encoding"] == "gzip"
            return r.json()

        await eventually(get_gzipped, shows)
        async with conn.transaction():
            await conn.execute(f"DELETE FROM {SCHEMA}.{table}")
            await conn.execute(f"INSERT INTO {SCHEMA}.{table} SELECT * FROM undo")
        await eventually(get_gzipped, lambda b: _same(b, plain.json()))
    finally:
        await conn.close()


async def test_a_response_asked_for_by_many_at_once_is_built_once(api_settings, api_db, api_keys, monkeypatch):
    """Clients asking at once for a response not kept yet wait for one build and are all served
    it (each with its own request ID); after a change, one build again."""
    import api.queries.search as search_sql

    real, builds = search_sql.search, []

    async def counted(*args, **kwargs):
        builds.append(1)
        await asyncio.sleep(0.2)  # the others arrive while it is built
        return await real(*args, **kwargs)

    monkeypatch.setattr(search_sql, "search", counted)
    front = create_app(api_settings)
    async with lifespan(front), httpx.AsyncClient(
            transport=httpx.ASGITransport(app=front), base_url="http://svc.test",
            headers={"Authorization": f"Bearer {api_keys['live']}"}) as client:
        assert await listener_of(front).wait_connected(10)

        async def burst() -> list:  # concurrent on this loop (the test client sends one at a time)
            return await asyncio.gather(*(client.get("/v1/search", params={"q": "panthers"}) for _ in range(20)))

        first = await burst()
        assert [r.status_code for r in first] == [200] * 20
        assert len(builds) == 1
        assert all(_same(r.json(), first[0].json()) for r in first)
        assert len({r.headers["request-id"] for r in first}) == 20
        conn = await asyncpg.connect(api_db)
        try:
            await conn.execute(f"UPDATE {SCHEMA}.search_index SET name = name WHERE id = $1", nfl_team("CAR"))
        finally:
            await conn.close()
        await eventually(burst, lambda _: len(builds) >= 2)
        assert len(builds) == 2


async def _undoable(conn, schema: str, table: str, sql: str, *args) -> None:
    await conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS undo_{table} AS SELECT * FROM {schema}.{table}")
    await conn.execute(sql, *args)


async def _undo(conn, schema: str, table: str) -> None:
    async with conn.transaction():
        await conn.execute(f"DELETE FROM {schema}.{table}")
        await conn.execute(f"INSERT INTO {schema}.{table} SELECT * FROM undo_{table}")
        await conn.execute(f"DROP TABLE undo_{table}")


def _counted(monkeypatch, module, name: str) -> list:
    real, calls = getattr(module, name), []

    async def counted(*args, **kwargs):
        calls.append(1)
        return await real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


async def test_a_game_built_again_for_a_score_reads_its_box_scores_again_only_for_a_stat_line(
        api_settings, api_db, api_keys, monkeypatch):
    """A game's box scores are kept by the version of `stat_lines` (api/routes/games.py): the game
    built again after a score is heard does not read them; after a change to `stat_lines` it does,
    and serves it."""
    import api.queries.stats as stats_sql

    reads = _counted(monkeypatch, stats_sql, "player_box_scores")
    front = create_app(api_settings)
    async with lifespan(front), httpx.AsyncClient(
            transport=httpx.ASGITransport(app=front), base_url="http://svc.test",
            headers={"Authorization": f"Bearer {api_keys['live']}"}) as client:
        assert await listener_of(front).wait_connected(10)
        player = await _get(client, f"/v1/players/{TREMBLE}", {})
        path = f"/v1/games/{player['game_lines'][0]['game_id']}"
        before = await _get(client, path, {})
        assert before["player_stats"] and len(reads) == 1
        home = (before["score"] or {}).get("home") or 0
        conn = await asyncpg.connect(api_db)
        try:
            await _undoable(conn, SCHEMA, "games", f"UPDATE {SCHEMA}.games SET score_home = $2 WHERE id = $1",
                            before["id"], home + 100)
            scored = await eventually(lambda: _get(client, path, {}), lambda b: _home_score(b) == home + 100)
            assert len(reads) == 1 and scored["player_stats"] == before["player_stats"]
            await _undoable(conn, SCHEMA, "stat_lines", f"UPDATE {SCHEMA}.stat_lines SET stats = stats || "
                            "'{\"probe\": 7}' WHERE game_id = $1 AND subject_id LIKE 'plr\\_%'", before["id"])
            await eventually(lambda: _get(client, path, {}),
                             lambda b: all(s["stats"].get("probe") == 7 for s in b["player_stats"]))
            assert len(reads) == 2
            await _undo(conn, SCHEMA, "stat_lines")
            await _undo(conn, SCHEMA, "games")
            await eventually(lambda: _get(client, path, {}), lambda b: _same(b, before))
        finally:
            await conn.close()


def _home_score(game: dict):
    """A served game's home score, None while it has none: a read answered from the kept page
    before the change's notification arrived still shows the old (maybe null) score, which an
    `eventually` predicate must take as 'not yet' rather than fail on."""
    return (game["score"] or {}).get("home")


async def test_the_sandbox_slate_day_is_read_again_only_when_the_kickoff_order_moves(
        api_settings, api_db, api_keys, monkeypatch):
    """A test-mode slate with no date is the sandbox's first day; that day is kept by the version of
    `games.kickoff` (api/routes/slate.py): a score does not read it again, a first game moved
    earlier does, and the slate follows it."""
    import api.queries.games as games_sql

    reads = _counted(monkeypatch, games_sql, "first_kickoff")
    schema = pg_schema("test")
    front = create_app(api_settings)
    async with lifespan(front), httpx.AsyncClient(
            transport=httpx.ASGITransport(app=front), base_url="http://svc.test",
            headers={"Authorization": f"Bearer {api_keys['test']}"}) as client:
        assert await listener_of(front).wait_connected(10)
        params = {"tz": "UTC"}
        before = await _get(client, "/v1/slate", params)
        first = before["data"][0]
        assert len(reads) == 1
        home = (first["score"] or {}).get("home") or 0
        conn = await asyncpg.connect(api_db)
        try:
            await _undoable(conn, schema, "games", f"UPDATE {schema}.games SET score_home = $2 WHERE id = $1",
                            first["id"], home + 100)
            await eventually(lambda: _get(client, "/v1/slate", params),
                             lambda b: _home_score(b["data"][0]) == home + 100)
            assert len(reads) == 1
            await conn.execute(f"UPDATE {schema}.games SET kickoff_sort = kickoff_sort - interval '2 days', "
                               "kickoff_at = kickoff_at - interval '2 days' WHERE id = $1", first["id"])
            moved = await eventually(lambda: _get(client, "/v1/slate", params), lambda b: b["date"] != before["date"])
            assert len(reads) == 2
            assert moved["date"] < before["date"] and [g["id"] for g in moved["data"]] == [first["id"]]
            await _undo(conn, schema, "games")
            await eventually(lambda: _get(client, "/v1/slate", params), lambda b: _same(b, before))
        finally:
            await conn.close()


async def test_kept_parts_belong_to_their_app(api_settings, api_db, api_keys, monkeypatch):
    """Parts are kept by the listener's versions, which each app counts from its own start: a second
    app in the same process (its versions equal the first's) reads its own first kickoff. Kept in a
    module-wide store, the second app was served the first app's (which failed the test above
    whenever an earlier test's app had shown the sandbox slate in the same process)."""
    import api.queries.games as games_sql

    reads = _counted(monkeypatch, games_sql, "first_kickoff")
    for apps in (1, 2):
        front = create_app(api_settings)
        async with lifespan(front), httpx.AsyncClient(
                transport=httpx.ASGITransport(app=front), base_url="http://svc.test",
                headers={"Authorization": f"Bearer {api_keys['test']}"}) as client:
            assert await listener_of(front).wait_connected(10)
            await _get(client, "/v1/slate", {"tz": "UTC"})
        assert len(reads) == apps
