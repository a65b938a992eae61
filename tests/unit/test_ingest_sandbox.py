"""The sandbox day: real slate and players, a simulation true to every real final score."""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ingest.samples import SAMPLES
from ingest.sandbox.books import BOOKS
from ingest.sandbox.clock import DAY_START, MAX_RUN_SECONDS, SandboxClock, ingame_on, pregame_on, reset_events, run_speed
from ingest.sandbox.day import DAY, build_day
from ingest.sandbox.simulation import SCORE_VALUES, SOURCE, split_score
from schemas.events import (
    GameScheduled, GameStateChanged, InjuryReported, MarketReopened, MarketSuspended, NewsPublished, PlayerRegistered,
    PriceQuoted, StatLineRecorded, TeamRegistered,
)

NEW_YORK = ZoneInfo("America/New_York")
NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def day():
    return build_day(SAMPLES, NOW)


def test_the_real_slate_of_sunday_2024_09_08(day):
    games = [e for e in day.pregame if isinstance(e, GameScheduled)]
    assert len(games) == 13 and {g.source for g in games} == {"nflverse"}
    assert {g.kickoff_at.astimezone(NEW_YORK).date() for g in games} == {DAY}
    assert {g.week for g in games} == {1} and len([e for e in day.pregame if isinstance(e, TeamRegistered)]) == 26
    assert len(day.claims) == 13
    lines = [e for e in day.ingame if isinstance(e, PriceQuoted) and e.source == "nflverse closing lines"]
    assert len(lines) == 13 * 3 and all(q.source_ts == next(g.kickoff_at for g in games if g.game_id == q.game_id)
                                         for q in lines)


def test_players_injuries_and_stat_lines_of_those_games(day):
    game_ids = {g.game_id for g in day.games}
    teams = {t for g in day.games for t in (g.home.team_id, g.away.team_id)}
    players = [e for e in day.pregame if isinstance(e, PlayerRegistered)]
    injuries = [e for e in day.pregame if isinstance(e, InjuryReported)]
    stats = [e for e in day.ingame if isinstance(e, StatLineRecorded)]
    news = [e for e in day.pregame if isinstance(e, NewsPublished)]
    assert players and injuries and stats and news
    assert {n.player_id for n in news} <= {p.player_id for p in players}
    assert {i.team_id for i in injuries} <= teams and {i.week for i in injuries} == {1}
    assert {s.game_id for s in stats} <= game_ids and {s.week for s in stats} == {1}
    finals = {e.game_id: e.source_ts for e in day.ingame if isinstance(e, GameStateChanged) and e.status == "final"}
    assert all(s.source_ts > finals[s.game_id] for s in stats)  # published after the game is over


def test_every_game_ends_on_its_real_score_through_valid_scoring_plays(day):
    states = defaultdict(list)
    for e in day.ingame:
        if isinstance(e, GameStateChanged):
            states[e.game_id].append(e)
    assert len(states) == 13
    for spec in day.games:
        seq = states[spec.game_id]
        assert seq[0].last_play.startswith("Kickoff") and seq[0].period == "Q1" and seq[0].clock == "15:00"
        assert seq[-1].status == "final" and (seq[-1].score_home, seq[-1].score_away) == (spec.home_score, spec.away_score)
        assert all(s.status == "live" for s in seq[:-1])
        previous = (0, 0)
        for s in seq:
            gained = (s.score_home - previous[0], s.score_away - previous[1])
            assert min(gained) >= 0 and (sum(gained) == 0 or sum(gained) in SCORE_VALUES), (spec.source_id, s.last_play)
            previous = (s.score_home, s.score_away)
            assert s.last_play and s.possession in (None, spec.home.team_id, spec.away.team_id)
        periods = [s.period for s in seq]
        assert periods == sorted(periods, key=["Q1", "Q2", "Q3", "Q4", "OT"].index)
        assert ("OT" in periods) == spec.overtime


def test_overtime_game_is_tied_after_regulation(day):
    (la_det,) = [g for g in day.games if g.source_id == "2024_01_LA_DET"]
    states = [e for e in day.ingame if isinstance(e, GameStateChanged) and e.game_id == la_det.game_id]
    end_of_regulation = next(s for s in states if s.last_play.startswith("End of regulation"))
    assert end_of_regulation.score_home == end_of_regulation.score_away == 20
    assert states[-1].period == "OT" and "(game over)" in states[-2].last_play


def test_simulated_events_are_labelled_and_on_that_day(day):
    simulated = [e for e in day.pregame + day.ingame if e.source == SOURCE]
    assert len(simulated) > 3000
    assert {e.source_ts.astimezone(NEW_YORK).date() for e in simulated} == {DAY}
    assert [e.source_ts for e in day.ingame] == sorted(e.source_ts for e in day.ingame)
    kinds = Counter(type(e).__name__ for e in simulated)
    assert kinds["MarketSuspended"] and kinds["MarketReopened"] and kinds["PriceQuoted"] > 2000


def test_several_books_quote_every_market_and_prices_move(day):
    quotes = [e for e in day.ingame + day.pregame if isinstance(e, PriceQuoted) and e.source == SOURCE]
    by_market = defaultdict(set)
    for q in quotes:
        by_market[q.market_id].add(q.book)
    assert len(by_market) == 13 * 3 and all(books == {b.key for b in BOOKS} for books in by_market.values())
    assert {b.price_format for b in BOOKS} == {"american", "decimal"}
    h2h = [q for q in quotes if q.market_type == "h2h" and q.book == BOOKS[0].key and q.game_id == day.games[0].game_id]
    assert len({q.outcomes[0].price for q in h2h}) > 5
    final_suspensions = [e for e in day.ingame if isinstance(e, MarketSuspended) and e.reason == "final"]
    assert len(final_suspensions) == 13 * 3
    assert all(isinstance(e, (MarketSuspended, MarketReopened, PriceQuoted, GameStateChanged, StatLineRecorded))
               for e in day.ingame)


def test_the_day_is_the_same_on_every_build(day):
    again = build_day(SAMPLES, datetime(2030, 1, 1, tzinfo=timezone.utc))
    assert [e.event_id for e in again.pregame] == [e.event_id for e in day.pregame]
    assert [e.event_id for e in again.ingame] == [e.event_id for e in day.ingame]
    assert len({e.event_id for e in day.pregame + day.ingame}) == len(day.pregame) + len(day.ingame)


@given(st.integers(min_value=0, max_value=80).filter(lambda n: n != 1), st.integers(min_value=0, max_value=10_000))
def test_any_score_splits_into_scoring_plays(points, seed):
    plays = split_score(points, random.Random(seed))
    assert sum(plays) == points and set(plays) <= set(SCORE_VALUES)


def test_the_day_is_a_sunday_in_week_1():
    assert DAY == date(2024, 9, 8) and DAY.weekday() == 6


def test_each_games_state_changes_have_distinct_times_and_the_final_comes_last(day):
    for spec in day.games:
        mine = [e for e in day.ingame if getattr(e, "game_id", None) == spec.game_id and e.source == SOURCE]
        states = [e for e in mine if isinstance(e, GameStateChanged)]
        times = [s.source_ts for s in states]
        assert times == sorted(times) and len(set(times)) == len(times), spec.source_id
        final = states[-1]
        assert final.status == "final"
        # nothing about the game's markets or state after its final but the final suspensions
        after = [e for e in mine if e.source_ts >= final.source_ts and e is not final]
        assert after and all(isinstance(e, MarketSuspended) and e.reason == "final" for e in after), spec.source_id


def test_a_run_plays_the_day_on_the_wall_clock_and_a_second_run_replaces_the_first(day):
    first = SandboxClock(NOW, 60.0)
    ingame, pregame = ingame_on(day, first), pregame_on(day, first)
    assert [e.source_ts for e in ingame] == sorted(e.source_ts for e in ingame)  # the day's order kept
    assert ingame[0].source_ts == NOW + (day.ingame[0].source_ts - DAY_START) / 60  # 11:00 is 2 minutes in
    assert ingame[-1].source_ts - ingame[0].source_ts == (day.ingame[-1].source_ts - day.ingame[0].source_ts) / 60
    games = [e for e in pregame if isinstance(e, GameScheduled)]
    assert len(games) == 13 and all(e.source_ts == NOW for e in games)
    early = [e for e in games if e.kickoff_at == NOW + timedelta(hours=4) / 60]  # 13:00 New York, 4 hours after 09:00
    assert len(early) == 8
    lives = [e for e in ingame if isinstance(e, GameStateChanged)]
    kickoff = {e.game_id: e.kickoff_at for e in games}
    assert all(e.source_ts >= kickoff[e.game_id] for e in lives)  # in play from kickoff, by the clock
    # reference data is the same in every run: its IDs do not change
    reference = {e.event_id for e in day.pregame if isinstance(e, (TeamRegistered, PlayerRegistered, InjuryReported))}
    assert reference and reference <= {e.event_id for e in pregame}
    # a second run is a new day: new events, every one later than the first run's
    second = SandboxClock(ingame[-1].source_ts + timedelta(seconds=1), 60.0)
    again = ingame_on(day, second)
    assert not {e.event_id for e in again} & {e.event_id for e in ingame}
    assert again[0].source_ts > ingame[-1].source_ts
    resets = reset_events(day, second, 2, NOW)
    assert reset_events(day, first, 1, NOW) == []
    assert Counter(type(e).__name__ for e in resets) == {"GameStateChanged": 13, "MarketReopened": 39}
    assert all(e.source_ts == second.anchor and getattr(e, "status", "scheduled") == "scheduled" for e in resets)
    # `max`: the whole day within a second
    fast = SandboxClock(NOW, run_speed(day, None))
    assert ingame_on(day, fast)[-1].source_ts - NOW == timedelta(seconds=MAX_RUN_SECONDS)
