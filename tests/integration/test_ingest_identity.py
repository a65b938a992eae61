"""One gm_ per real game and one tm_ per real team across sources, in the Postgres registry."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import asyncpg

from ingest import nflverse_games, odds_api
from ingest.event_log import open_event_log
from ingest.export import read_log
from ingest.pipeline import ingest
from ingest.registry import game_ids_for
from ingest.samples import SAMPLES
from schemas.events import GameRescheduled, GameScheduled, decode

GAMES = SAMPLES / "nflverse" / "games_2023_2025.csv"
ODDS_2023 = SAMPLES / "oddsapi" / "nfl_2023_draftkings_spreads_american.json"  # 2023 week 1, preseason lines


def now():
    return datetime.now(timezone.utc)


async def run(settings, *steps, dataset="live"):
    async with open_event_log(settings, dataset) as log:
        return [await ingest(parse(path, now()), log) for parse, path in steps]


def week1_2023_ids():
    return [r["id"] for r in json.loads(ODDS_2023.read_text())]


async def the_same_games(settings):
    conn = await asyncpg.connect(settings.database_url)
    try:
        odds = await game_ids_for(conn, "live", "The Odds API", week1_2023_ids())
        nfl = await conn.fetch(
            "SELECT source_id, entity_id FROM ingest.identities WHERE dataset = 'live' AND kind = 'game' "
            "AND source = 'nflverse' AND source_id LIKE '2023_01_%'")
    finally:
        await conn.close()
    return odds, {r["source_id"]: r["entity_id"] for r in nfl}


async def test_nflverse_then_odds_api_one_game_id_per_game(settings, topics):
    await run(settings, (nflverse_games.parse, GAMES), (odds_api.parse, ODDS_2023))
    odds, nfl = await the_same_games(settings)
    assert len(odds) == 16 and set(odds.values()) <= set(nfl.values())
    # both sources' IDs end up in known_by of the same game
    scheduled = [decode(r.value) async for r in read_log(settings, "live") if r.topic == "feed.games"]
    by_game: dict[str, set] = {}
    for e in scheduled:
        if isinstance(e, GameScheduled):
            by_game.setdefault(e.game_id, set()).update((k.source, k.source_id) for k in e.known_by)
    kc_det = nfl["2023_01_DET_KC"]
    assert ("nflverse", "2023_01_DET_KC") in by_game[kc_det]
    assert ("The Odds API", "42db668449664943833b5c04a583328a") in by_game[kc_det]


async def test_odds_api_first_then_nflverse_gives_the_same_ids(settings, topics):
    await run(settings, (odds_api.parse, ODDS_2023), (nflverse_games.parse, GAMES))
    odds, nfl = await the_same_games(settings)
    assert len(odds) == 16 and set(odds.values()) <= set(nfl.values())
    assert odds["42db668449664943833b5c04a583328a"] == nfl["2023_01_DET_KC"]


async def test_renamed_team_is_one_team_across_sources(settings, topics):
    await run(settings, (nflverse_games.parse, GAMES), (odds_api.parse, SAMPLES / "oddsapi" / "nfl_2021_h2h_decimal.json"),
              (odds_api.parse, SAMPLES / "oddsapi" / "nfl_2022_h2h_spreads_totals_american.json"))
    conn = await asyncpg.connect(settings.database_url)
    try:
        rows = await conn.fetch(
            "SELECT source, source_id, entity_id FROM ingest.identities WHERE dataset = 'live' AND kind = 'team' "
            "AND source_id = ANY($1::text[])", ["WAS", "Washington Football Team", "Washington Commanders"])
    finally:
        await conn.close()
    assert {(r["source"], r["source_id"]) for r in rows} == {
        ("nflverse", "WAS"), ("The Odds API", "Washington Football Team"), ("The Odds API", "Washington Commanders")}
    assert len({r["entity_id"] for r in rows}) == 1


async def test_a_moved_game_is_rescheduled_across_runs(settings, topics, tmp_path):
    lines = GAMES.read_text().splitlines()
    header, row = lines[0], next(line for line in lines if line.startswith("2024_01_PIT_ATL,"))
    before, after = tmp_path / "before.csv", tmp_path / "after.csv"
    before.write_text(f"{header}\n{row}\n")
    after.write_text(f"{header}\n{row.replace('2024-09-08,Sunday,13:00', '2024-09-09,Monday,19:00')}\n")
    first, second, third = await run(
        settings, (nflverse_games.parse, before), (nflverse_games.parse, after), (nflverse_games.parse, after))
    assert first.by_type["GameRescheduled"] == 0 and second.by_type["GameRescheduled"] == 1
    assert third.accepted == 0  # the same file again: nothing new, and no second reschedule
    events = [decode(r.value) async for r in read_log(settings, "live") if r.topic == "feed.games"]
    (moved,) = [e for e in events if isinstance(e, GameRescheduled)]
    ids = {e.game_id for e in events if isinstance(e, GameScheduled)}
    assert ids == {moved.game_id} and moved.kickoff_at == datetime(2024, 9, 9, 23, tzinfo=timezone.utc)


async def test_datasets_have_separate_registries_and_logs(settings, topics):
    await run(settings, (nflverse_games.parse, GAMES), dataset="test")
    assert [r async for r in read_log(settings, "live")] == []
    assert len([r async for r in read_log(settings, "test")]) == 4033
    (again,) = await run(settings, (nflverse_games.parse, GAMES), dataset="live")
    assert again.accepted == 4033  # the live log did not have them
