"""GET /v1/slate: one local day across sports (real Postgres, sample read models)."""

from __future__ import annotations

from datetime import datetime, timedelta

import asyncpg

from tests.support.sample_fold import nfl_game_id


def _hours(slate: dict) -> float:
    start = datetime.fromisoformat(slate["starts_at"].replace("Z", "+00:00"))
    end = datetime.fromisoformat(slate["ends_at"].replace("Z", "+00:00"))
    return (end - start) / timedelta(hours=1)


async def test_sunday_2024_09_08_in_new_york_has_the_sunday_games(api, sample):
    r = await api.get("/v1/slate", params={"date": "2024-09-08", "tz": "America/New_York"})
    assert r.status_code == 200, r.text
    slate = r.json()
    assert slate["object"] == "slate" and slate["date"] == "2024-09-08" and slate["timezone"] == "America/New_York"
    assert slate["starts_at"] == "2024-09-08T04:00:00Z" and slate["ends_at"] == "2024-09-09T04:00:00Z"
    sunday = {nfl_game_id(g) for g in sample.schedule if g["gameday"] == "2024-09-08"}
    assert len(sunday) == 13 and slate["game_count"] == 13
    assert {g["id"] for g in slate["data"]} == sunday
    # the Sunday night game kicks off at 00:20 UTC on Monday and is still on Sunday's slate
    assert slate["data"][-1]["name"] == "Los Angeles Rams at Detroit Lions"
    assert slate["data"][-1]["kickoff_at"] == "2024-09-09T00:20:00Z"
    kickoffs = [(g["kickoff_at"], g["id"]) for g in slate["data"]]
    assert kickoffs == sorted(kickoffs)
    assert slate["rg_line"] and all(g["rg_line"] == slate["rg_line"] for g in slate["data"])
    for g in slate["data"]:
        assert [m["type"] for m in g["markets"]] == ["h2h", "spreads", "totals"]
        assert not {"player_stats", "team_stats"} & set(g)
        assert f"game:{g['id']}" in slate["live_topics"]


async def test_the_same_day_in_another_zone_is_another_set_of_games(api):
    r = await api.get("/v1/slate", params={"date": "2024-09-08", "tz": "Asia/Tokyo"})
    slate = r.json()
    assert slate["starts_at"] == "2024-09-07T15:00:00Z" and slate["ends_at"] == "2024-09-08T15:00:00Z"
    assert slate["game_count"] == 0 and slate["data"] == []  # Sunday games start 17:00 UTC
    monday_tokyo = (await api.get("/v1/slate", params={"date": "2024-09-09", "tz": "Asia/Tokyo"})).json()
    assert monday_tokyo["game_count"] == 13


async def test_clock_change_days_are_25_and_23_hours(api, sample):
    fall = (await api.get("/v1/slate", params={"date": "2024-11-03", "tz": "America/New_York"})).json()
    assert fall["starts_at"] == "2024-11-03T04:00:00Z" and fall["ends_at"] == "2024-11-04T05:00:00Z"
    assert _hours(fall) == 25
    assert fall["game_count"] == sum(g["gameday"] == "2024-11-03" for g in sample.schedule) == 13
    spring = (await api.get("/v1/slate", params={"date": "2024-03-31", "tz": "Europe/London"})).json()
    assert spring["starts_at"] == "2024-03-31T00:00:00Z" and spring["ends_at"] == "2024-03-31T23:00:00Z"
    assert _hours(spring) == 23
    plain = (await api.get("/v1/slate", params={"date": "2024-09-08", "tz": "Europe/London"})).json()
    assert _hours(plain) == 24


async def test_game_count_is_the_same_on_every_page(api):
    params = {"date": "2024-09-08", "limit": 5}
    first = (await api.get("/v1/slate", params=params)).json()
    second = (await api.get("/v1/slate", params={**params, "cursor": first["next_cursor"]})).json()
    third = (await api.get("/v1/slate", params={**params, "cursor": second["next_cursor"]})).json()
    assert [p["game_count"] for p in (first, second, third)] == [13, 13, 13]
    assert [len(p["data"]) for p in (first, second, third)] == [5, 5, 3]
    assert first["has_more"] and second["has_more"] and not third["has_more"] and third["next_cursor"] is None
    ids = [g["id"] for p in (first, second, third) for g in p["data"]]
    assert len(set(ids)) == 13
    moved = await api.get("/v1/slate", params={"date": "2024-09-15", "limit": 5, "cursor": first["next_cursor"]})
    assert moved.status_code == 400 and moved.json()["param"] == "cursor"


async def test_sport_competition_and_soccer_across_sports(api):
    epl = (await api.get("/v1/slate", params={"date": "2024-08-24", "tz": "Europe/London"})).json()
    assert epl["game_count"] == 7 and {g["sport"] for g in epl["data"]} == {"soccer"}
    assert all(len(g["markets"]) == 1 and g["markets"][0]["type"] == "h2h" for g in epl["data"])
    by_sport = (await api.get("/v1/slate", params={"date": "2024-08-24", "tz": "Europe/London", "sport": "soccer"})).json()
    by_comp_as_sport = (await api.get("/v1/slate", params={"date": "2024-08-24", "tz": "Europe/London", "sport": "epl"})).json()
    by_comp = (await api.get("/v1/slate", params={"date": "2024-08-24", "tz": "Europe/London", "competition": "epl"})).json()
    assert by_sport["game_count"] == by_comp_as_sport["game_count"] == by_comp["game_count"] == 7
    none = (await api.get("/v1/slate", params={"date": "2024-08-24", "tz": "Europe/London", "sport": "american_football"})).json()
    assert none["game_count"] == 0


async def test_status_filter_live_includes_suspended(api, api_db, sample):
    sunday = sorted((g for g in sample.schedule if g["gameday"] == "2024-09-08"), key=lambda g: g["game_id"])
    live_id, suspended_id = nfl_game_id(sunday[0]), nfl_game_id(sunday[1])
    conn = await asyncpg.connect(api_db)
    try:
        await conn.execute("UPDATE live.games SET status = 'live', period = 'Q2', clock = '07:12' WHERE id = $1", live_id)
        await conn.execute("UPDATE live.games SET status = 'suspended' WHERE id = $1", suspended_id)
        live = (await api.get("/v1/slate", params={"date": "2024-09-08", "status": "live"})).json()
        assert {g["id"] for g in live["data"]} == {live_id, suspended_id} and live["game_count"] == 2
        assert all(g["stale_after_ms"] == 15_000 for g in live["data"]) and live["stale_after_ms"] == 15_000
        final = (await api.get("/v1/slate", params={"date": "2024-09-08", "status": "final"})).json()
        assert final["game_count"] == 11
        scheduled = (await api.get("/v1/slate", params={"date": "2024-09-08", "status": "scheduled"})).json()
        assert scheduled["game_count"] == 0
        bad = await api.get("/v1/slate", params={"date": "2024-09-08", "status": "suspended"})
        assert bad.status_code == 400 and bad.json()["param"] == "status"
    finally:
        await conn.execute("UPDATE live.games SET status = 'final', period = NULL, clock = NULL WHERE id = ANY($1)",
                           [live_id, suspended_id])
        await conn.close()


async def test_time_zone_and_date_are_validated(api):
    for tz in ("Mars/Olympus", "../../etc/passwd", "EST5EDTX", "x" * 65):
        r = await api.get("/v1/slate", params={"tz": tz})
        assert r.status_code == 400 and r.json()["code"] == "invalid_request" and r.json()["param"] == "tz", tz
    r = await api.get("/v1/slate", params={"date": "2024-02-30"})
    assert r.status_code == 400 and r.json()["param"] == "date"
    today = await api.get("/v1/slate", params={"tz": "Pacific/Auckland"})
    assert today.status_code == 200 and today.json()["timezone"] == "Pacific/Auckland"


async def test_the_first_and_last_days_of_the_calendar_are_answered(api):
    """Days at the ends of the calendar: an empty slate, or a 400 on `date` where the day's
    bounds fall outside what a timestamp can hold; never a 500."""
    for day, tz in (("0001-01-01", "America/New_York"), ("0001-01-01", "Pacific/Auckland"),
                    ("9999-12-31", "America/New_York"), ("9999-12-31", "Pacific/Auckland")):
        r = await api.get("/v1/slate", params={"date": day, "tz": tz})
        if r.status_code == 200:
            assert (r.json()["date"], r.json()["game_count"], r.json()["data"]) == (day, 0, []), (day, tz)
        else:
            assert (r.status_code, r.json()["code"], r.json()["param"]) == (400, "invalid_request", "date"), (day, tz)
