"""Served figures against their source files (issue 20, issue 19 item 12): every live sample file
through the real pipeline (ingest into the real broker, the projector into real PostgreSQL),
then read through the API as a client would, each figure checked against a hand computation
from the file it came from."""

from __future__ import annotations

import csv
import json
import secrets
from datetime import date, datetime, timezone
from fractions import Fraction

import asyncpg
import pytest
from litestar.testing import AsyncTestClient

from api.app import create_app
from infra.settings import load_settings
from schemas.natural_keys import game_id, player_id, team_id
from tests.conftest import SESSION_TAG, with_database
from tests.support.api_fixtures import KEY_SECRET, make_key
from tests.support.search_relevance import load_queries, relevance
from tests.support.served_pipeline import load_samples
from tests.support.sample_fold import SAMPLES


@pytest.fixture(scope="module")
async def pipeline(broker, pg_server, pg_template, tmp_path_factory):
    """Every live sample file ingested and projected, and an API client on the result."""
    name = f"svct_{SESSION_TAG}_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(pg_server)
    await admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{pg_template}" STRATEGY FILE_COPY')
    await admin.close()
    settings = load_settings(
        env={}, use_stack=False, data_dir=tmp_path_factory.mktemp("svc"), kafka_bootstrap=broker,
        database_url=with_database(pg_server, name), topic_namespace=f"t{secrets.token_hex(4)}.",
        topic_partitions=2, key_secret=KEY_SECRET,
    )
    assert await load_samples(settings) > 0
    key = await make_key(settings.database_url, "figures")
    async with AsyncTestClient(app=create_app(settings)) as client:
        client.headers["Authorization"] = f"Bearer {key}"
        yield client, settings
    admin = await asyncpg.connect(pg_server)
    await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    await admin.close()


async def get(client, path, **params):
    r = await client.get(path, params=params)
    assert r.status_code == 200, r.text
    return r.json()


def stat_rows(name: str) -> list[dict[str, str]]:
    with open(SAMPLES / "nflverse" / "player_stats_2024_weeks01-03.csv", newline="") as f:
        return [r for r in csv.DictReader(f) if r["player_display_name"] == name]


def exact(value) -> Fraction:
    return Fraction(str(value))


def close(served, expected: Fraction) -> bool:
    """Served exactly, or (a decimal that does not terminate) within half a unit of the 12th place."""
    return abs(exact(served) - expected) <= Fraction(1, 2 * 10**12)


# ---- item 1 and 2: season rates and per-game means ---------------------------------------------


@pytest.mark.parametrize("name", ["Justin Jefferson", "Patrick Mahomes", "Travis Kelce", "Saquon Barkley"])
async def test_season_rate_stats_are_recomputed_from_the_csv(pipeline, name):
    client, _ = pipeline
    rows = stat_rows(name)
    player = await get(client, f"/v1/players/{player_id('nfl', rows[0]['player_id'])}")
    lines = {s["basis"]: s["stats"] for s in player["season_lines"] if s["season"] == "2024"}
    total = {k: sum(exact(r[k]) for r in rows if r[k] != "") for k in rows[0] if k in (
        "passing_yards", "passing_air_yards", "receiving_yards", "receiving_air_yards", "targets", "attempts")}
    if total["passing_air_yards"] > 0:
        assert close(lines["rate"]["pacr"], total["passing_yards"] / total["passing_air_yards"])
    if total["receiving_air_yards"] > 0:
        assert close(lines["rate"]["racr"], total["receiving_yards"] / total["receiving_air_yards"])
    team_targets = sum(round(exact(r["targets"]) / exact(r["target_share"])) for r in rows
                       if r["target_share"] not in ("", "0") and r["targets"] != "0")
    if team_targets:
        assert close(lines["rate"]["target_share"], total["targets"] / team_targets)
        assert exact(lines["rate"]["target_share"]) <= 1
    for rate in ("pacr", "racr", "target_share", "air_yards_share", "wopr", "dakota"):
        assert rate not in lines["total"] and rate not in lines["per_game"]
    # per game: the exact mean (12 places when it does not terminate), never 3 places
    assert close(lines["per_game"]["attempts"], total["attempts"] / len(rows))
    assert lines["total"]["targets"] == total["targets"]


# ---- item 3: the main line -------------------------------------------------------------------


async def test_det_at_kc_2023_week_1_main_spread_is_the_closing_line(pipeline):
    client, _ = pipeline
    gid = game_id("nfl", team_id("nfl", "KC"), team_id("nfl", "DET"), date(2023, 9, 7))
    markets = (await get(client, "/v1/markets", game_id=gid))["data"]
    spreads = next(m for m in markets if m["type"] == "spreads")
    detail = await get(client, f"/v1/markets/{spreads['id']}")
    assert detail["main_point"] == -4.0 and detail["main_line"]["point"] == -4.0  # nflverse spread_line 4.0
    assert detail["main_line"]["basis"] == "published_line"
    (preseason,) = detail["alternate_lines"]  # DraftKings' -6.5 of 2023-08-18, one bookmaker: no number
    assert preseason["point"] == -6.5 and preseason["basis"] == "too_few_books"
    assert preseason["hold"] is None and all(o["consensus_price"] is None for o in preseason["outcomes"])
    assert "too_few_books" in preseason["devig_notes"]["flags"]


# ---- item 4 and issue 19 item 12: exchanges, and one-book "consensus" ------------------------------


async def test_no_exchange_in_the_bills_at_rams_consensus_and_no_one_book_number(pipeline):
    client, settings = pipeline
    gid = game_id("nfl", team_id("nfl", "LA"), team_id("nfl", "BUF"), date(2022, 9, 8))
    markets = (await get(client, "/v1/markets", game_id=gid))["data"]
    h2h = await get(client, f"/v1/markets/{next(m for m in markets if m['type'] == 'h2h')['id']}")
    with open(SAMPLES / "oddsapi" / "nfl_2022_h2h_spreads_totals_american.json") as f:
        event = next(e for e in json.load(f) if e["home_team"] == "Los Angeles Rams")
    quoting = {b["key"] for b in event["bookmakers"] if any(m["key"] == "h2h" for m in b["markets"])}
    assert h2h["main_line"]["books"] == len(quoting - {"betfair", "matchbook"}) and "betfair" in quoting
    conn = await asyncpg.connect(settings.database_url)
    try:
        # every served line: at least 2 bookmakers, or a published line, or no number at all
        bad = await conn.fetch(
            "SELECT market_id, line_key FROM live.market_lines WHERE NOT ("
            " (basis = 'consensus' AND books >= 2) OR basis = 'published_line'"
            " OR (basis = 'too_few_books' AND hold IS NULL AND NOT jsonb_path_exists(outcomes, '$[*].price ? (@ != null)')))")
        assert bad == []
        # a DraftKings-only market (2023 week 1 file) with no other source serves no number
        one_book = await conn.fetchval(
            "SELECT count(*) FROM live.market_lines WHERE basis = 'too_few_books' AND books = 1")
        assert one_book > 0
    finally:
        await conn.close()


# ---- item 5: no past game is `scheduled` -----------------------------------------------------------


async def test_no_past_game_is_scheduled(pipeline):
    client, _ = pipeline
    now = datetime.now(timezone.utc)
    upcoming = await get(client, "/v1/games", status="scheduled", limit=50)
    for g in upcoming["data"]:
        assert g["kickoff_at"] is None or datetime.fromisoformat(g["kickoff_at"].replace("Z", "+00:00")) > now
    unknown = await get(client, "/v1/games", status="result_unknown", limit=50)
    assert unknown["data"] and all(g["status"] == "result_unknown" for g in unknown["data"])
    # the 2021 games known only from odds files come first (they were `scheduled`)
    first = unknown["data"][0]
    assert first["kickoff_at"] < "2021-12-31" and first["score"] is None
    every = await get(client, "/v1/games", limit=50)
    assert all(g["status"] != "scheduled" or datetime.fromisoformat(g["kickoff_at"].replace("Z", "+00:00")) > now
               for g in every["data"] if g["kickoff_at"])


# ---- item 6: season dates from a source that states them -----------------------------------------


async def test_season_dates_are_the_sourced_ones_not_the_loaded_games(pipeline):
    client, _ = pipeline
    competitions = {c["slug"]: c for c in (await get(client, "/v1/competitions"))["data"]}
    nfl = {s["label"]: s for s in competitions["nfl"]["seasons"]}
    # only week 10 of 2021 is loaded (an odds file): the season still runs kickoff game to Super Bowl
    assert (nfl["2021"]["starts_on"], nfl["2021"]["ends_on"]) == ("2021-09-09", "2022-02-13")
    assert (nfl["2024"]["starts_on"], nfl["2024"]["ends_on"]) == ("2024-09-05", "2025-02-09")
    epl = {s["label"]: s for s in competitions["epl"]["seasons"]}
    assert epl["2024-25"]["starts_on"] == "2024-08-16"  # not the first loaded game (2024-08-19)


# ---- item 7: no invented times -------------------------------------------------------------------


async def test_no_invented_provenance_times(pipeline):
    client, _ = pipeline
    gid = game_id("nfl", team_id("nfl", "KC"), team_id("nfl", "BAL"), date(2024, 9, 5))
    game = await get(client, f"/v1/games/{gid}")
    assert game["status"] == "final"
    kickoff = game["kickoff_at"]
    # nflverse gives no time for a result: null, not kickoff + 4 h; `as_of` is when we read it
    assert game["state_provenance"]["source"] == "nflverse" and game["state_provenance"]["source_ts"] is None
    ingested = game["state_provenance"]["ingest_ts"]
    assert game["as_of"] == ingested and game["as_of"] > "2026-01-01"
    assert game["provenance"]["source_ts"] == kickoff  # the schedule: the source's own kickoff
    for line in game["player_stats"]:
        assert line["provenance"]["source_ts"] is None and line["provenance"]["ingest_ts"] > "2026-01-01"
    assert game["team_stats"]
    for line in game["team_stats"]:
        p = line["provenance"]
        assert p["source_ts"] is None and p["ingest_ts"] > "2026-01-01"  # ours, never equal to an invented source time


# ---- item 9: the source's season type ------------------------------------------------------------


async def test_postseason_games_keep_the_source_s_game_type(pipeline):
    client, _ = pipeline
    games = (await get(client, "/v1/games", competition="nfl", season="2023", week=22))["data"]
    assert [(g["name"], g["season_type"]) for g in games] == [
        ("Super Bowl: San Francisco 49ers vs Kansas City Chiefs", "SB")]
    with open(SAMPLES / "nflverse" / "games_2023_2025.csv", newline="") as f:
        types = {r["game_type"] for r in csv.DictReader(f)}
    served = set()
    for week in (1, 19, 20, 21, 22):
        served |= {g["season_type"] for g in (await get(client, "/v1/games", competition="nfl", season="2023",
                                                         week=week, limit=50))["data"]}
    assert served == types == {"REG", "WC", "DIV", "CON", "SB"}


# ---- search: nicknames, close spellings, matchups, and the relevance figure ----------------------


async def test_search_finds_what_people_type(pipeline):
    client, _ = pipeline

    async def first(q):
        data = (await get(client, "/v1/search", q=q))["data"]
        return (data[0]["kind"], data[0]["name"]) if data else None

    assert await first("chefs") == ("team", "Kansas City Chiefs")  # was Chelsea, no Chiefs in the top 5
    assert await first("niners") == ("team", "San Francisco 49ers")  # was nothing
    assert await first("Bucs") == ("team", "Tampa Bay Buccaneers")  # was the player Bucky Irving
    kind, name = await first("Chiefs vs Ravens")  # was "Ravens vs Titans"
    assert kind == "game" and "Kansas City Chiefs" in name and "Baltimore Ravens" in name


async def test_search_relevance_over_the_query_set(pipeline):
    _, settings = pipeline
    queries = load_queries()
    assert len([q for q in queries if q.kind in ("team", "player")]) >= 100
    conn = await asyncpg.connect(settings.database_url)
    try:
        shares, misses = await relevance(conn, '"live"', queries)
    finally:
        await conn.close()
    assert shares["team"] >= 0.95 and shares["player"] >= 0.95, misses
    assert shares["game"] >= 0.85, misses


# ---- item 8: injury fields ------------------------------------------------------------------------


async def test_injury_designation_in_words_and_a_game_day_status(pipeline):
    client, _ = pipeline
    with open(SAMPLES / "nflverse" / "injuries_2024_weeks01-10.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    latest: dict[str, dict[str, str]] = {}
    for r in rows:  # the current report: latest week, then the newest version
        key = (int(r["season"]), int(r["week"]), r["date_modified"])
        if r["gsis_id"] not in latest or key > latest[r["gsis_id"]][0]:
            latest[r["gsis_id"]] = (key, r)
    wanted = {"": ("Not designated", "active"), "Questionable": ("Questionable", "active"),
              "Doubtful": ("Doubtful", "inactive"), "Out": ("Out", "out"), "Note": ("Note", "active")}
    seen = set()
    for gsis, (_, r) in sorted(latest.items()):
        status = r["report_status"].strip()
        if status in seen:
            continue
        player = await get(client, f"/v1/players/{player_id('nfl', gsis)}")
        assert (player["injury"]["status"], player["injury"]["game_day"]) == wanted[status], (gsis, status)
        seen.add(status)
    assert seen == set(wanted)  # every value the source uses, served mapped
