"""The Python client (client/) against the served API over the sample read models (real
Postgres): typed resources, pages that follow cursors, problems raised as typed exceptions, and
the headers every call carries. The sync client drives the app through litestar's TestClient,
the async one through its AsyncTestClient: the same app, front door and access checks."""

from __future__ import annotations

import csv
import uuid

import httpx
import pytest
from litestar.testing import TestClient

import client
from api.app import create_app
from client import models
from schemas.natural_keys import market_id
from tests.support.sample_fold import SAMPLES, nfl_game_id, nfl_player


@pytest.fixture(scope="module")
def sync_app(api_settings):
    with TestClient(app=create_app(api_settings)) as http:
        yield http


@pytest.fixture(scope="module")
def svc(sync_app, api_keys):
    seen: list[tuple[httpx.Request, httpx.Response]] = []
    sync_app.event_hooks["response"] = [lambda response: seen.append((response.request, response))]
    c = client.Client(base_url=str(sync_app.base_url), api_key=api_keys["live"], http_client=sync_app)
    c.seen = seen
    return c


@pytest.fixture
def asvc(api, api_keys):
    return client.AsyncClient(base_url=str(api.base_url), api_key=api_keys["live"], http_client=api)


def _week(season: str, week: str) -> dict[str, dict[str, str]]:
    with open(SAMPLES / "nflverse" / "games_2023_2025.csv", newline="") as f:
        return {nfl_game_id(g): g for g in csv.DictReader(f) if g["season"] == season and g["week"] == week}


def test_games_list_is_a_page_of_typed_games(svc):
    page = svc.games.list(competition="nfl", season=2024, week=1)
    expected = _week("2024", "1")
    assert isinstance(page, client.Page) and page.has_more is False and page.next_cursor is None
    assert len(page.data) == 16 and {g.id for g in page.data} == set(expected)
    assert all(isinstance(g, models.Game) for g in page.data)
    first = page.data[0]
    assert first.name == "Baltimore Ravens at Kansas City Chiefs"
    assert first.kickoff_at.isoformat() == "2024-09-06T00:20:00+00:00"
    for g in page.data:
        row = expected[g.id]
        assert g.status == "final"
        assert (g.score.home, g.score.away) == (int(row["home_score"]), int(row["away_score"]))
        assert g.home_team.abbreviation == row["home_team"] and g.live_topics == [f"game:{g.id}"]


def test_auto_paging_iter_follows_the_cursor_through_the_season(svc):
    page = svc.games.list(competition="nfl", season="2024", limit=7)
    assert len(page.data) == 7 and page.has_more
    games = list(page.auto_paging_iter())
    assert len(games) == 285 and len({g.id for g in games}) == 285
    assert [(g.kickoff_at, g.id) for g in games] == sorted((g.kickoff_at, g.id) for g in games)


async def test_the_async_client_pages_the_same_way(asvc, svc):
    page = await asvc.games.list(competition="nfl", season=2024, limit=50)
    assert isinstance(page, client.AsyncPage) and len(page.data) == 50
    ids = [g.id async for g in page.auto_paging_iter()]
    assert ids == [g.id for g in svc.games.list(competition="nfl", season=2024, limit=50).auto_paging_iter()]
    assert len(ids) == 285


def test_game_detail_market_detail_and_player_are_typed(svc, sample):
    row = next(g for g in sample.schedule if g["game_id"] == "2024_01_BAL_KC")
    game = svc.games.retrieve(nfl_game_id(row))
    assert isinstance(game, models.GameDetail) and (game.score.home, game.score.away) == (27, 20)
    assert [(m.type, m.kind) for m in game.markets] == [("h2h", "game"), ("spreads", "game"), ("totals", "game")]
    assert game.rg_line and "21+" in game.rg_line
    mahomes = next(s for s in game.player_stats if s.subject_id == nfl_player("00-0033873"))
    assert mahomes.stats["passing_yards"] == 291
    market = svc.markets.retrieve(market_id(sample.opener.game_id, "game", "spreads", "full", None))
    assert isinstance(market, models.MarketDetail) and market.main_line.point == 2.5
    assert market.game.name == "Buffalo Bills at Los Angeles Rams" and market.rg_line
    outcome = market.main_line.outcomes[0]
    assert isinstance(outcome.consensus_price, models.Price)
    assert outcome.fair_price.decimal == pytest.approx(1 / outcome.no_vig_probability)
    listed = svc.markets.list(game_id=sample.opener.game_id)
    assert market.id in {m.id for m in listed.data} and all(isinstance(m, models.Market) for m in listed.data)
    player = svc.players.retrieve(nfl_player("00-0033873"))
    assert isinstance(player, models.Player) and player.name == "Patrick Mahomes"


def test_slate_search_reference_sports_and_a_calculation(svc):
    slate = svc.slate.retrieve(date="2024-09-08", tz="America/New_York", competition="nfl")
    assert isinstance(slate.envelope, models.Slate) and slate.envelope.timezone == "America/New_York"
    assert slate.envelope.game_count == len(list(slate.auto_paging_iter())) > 0
    assert all(isinstance(g, models.SlateGame) for g in slate.data)
    found = svc.search.list("mahomes")
    assert found.data and found.data[0].name == "Patrick Mahomes" and found.data[0].kind == "player"
    entries = svc.reference.list()
    assert entries.data and all(isinstance(e, models.ReferenceEntry) for e in entries.data)
    entry = svc.reference.retrieve(entries.data[0].id)
    assert entry.id == entries.data[0].id and entry.body
    sports = svc.sports.list()
    assert sports.data and all(isinstance(s, models.Sport) and s.competitions for s in sports.data)
    calc = svc.calculations.devig(odds=[-110, -110], method="multiplicative", format="american")
    assert isinstance(calc, models.Calculation) and calc.rg_line
    assert calc.result["probabilities"] == pytest.approx([0.5, 0.5])


def test_problems_are_typed_exceptions_with_code_param_and_request_id(svc):
    with pytest.raises(client.NotFoundError) as missing:
        svc.players.retrieve("plr_" + "2" * 20)
    assert missing.value.code == "not_found" and missing.value.param == "player_id" and missing.value.status == 404
    assert missing.value.request_id.startswith("req_")
    with pytest.raises(client.InvalidRequestError) as bad:
        svc.games.list(competition="nfl", status="halftime-ish")
    assert bad.value.code == "invalid_request" and bad.value.param == "status"
    first = svc.games.list(competition="nfl", season=2024, limit=5)
    with pytest.raises(client.InvalidRequestError) as changed:
        svc.games.list(competition="nfl", season=2023, limit=5, cursor=first.next_cursor)
    assert changed.value.param == "cursor"
    bad_key = client.Client(base_url=svc._core.base_url, api_key="svc_live_" + "x" * 32, http_client=svc._http)
    with pytest.raises(client.AuthenticationError) as unauthenticated:
        bad_key.games.list()
    assert unauthenticated.value.code == "unauthenticated" and unauthenticated.value.param == "Authorization"
    old = client.Client(base_url=svc._core.base_url, api_version="1999-01-01", http_client=svc._http)
    with pytest.raises(client.InvalidRequestError) as version:
        old.sports.list()
    assert version.value.code == "unsupported_api_version" and version.value.param == "Api-Version"


def test_every_call_carries_the_key_the_version_and_a_client_request_id_the_api_echoes(svc):
    svc.seen.clear()
    svc.games.list(competition="nfl", season=2024, week=2)
    svc.calculations.devig(odds=[2.0, 2.0], idempotency_key="idem-test-1")
    (get_req, get_resp), (post_req, _) = svc.seen
    assert get_req.headers["authorization"] == f"Bearer {svc._core.api_key}"
    assert get_req.headers["api-version"] == "2026-10-05" == get_resp.headers["api-version"]
    assert uuid.UUID(get_req.headers["client-request-id"])
    assert get_resp.headers["client-request-id"] == get_req.headers["client-request-id"]
    assert get_resp.headers["request-id"].startswith("req_")
    assert "idempotency-key" not in get_req.headers
    assert post_req.headers["idempotency-key"] == "idem-test-1"
    assert post_req.headers["client-request-id"] != get_req.headers["client-request-id"]
