"""Synthetic stored history for the REST scaling curve (bench_scaling): `n` NFL seasons of
games, each game priced by a few books on three markets, as canonical events.

Season `y` is a full schedule (the 32 teams, 272 games from early September, `season="y"`);
its quotes are one round per book, prices wandering as in `projection_events.season_quotes`.
Deterministic: the same `n` gives the same events.
"""

from __future__ import annotations

from datetime import date, timedelta

from schemas.events import GameScheduled, PriceQuoted, TeamRegistered
from tests.support import projection_events as ev

TEAMS = ["ARI", "ATL", "BAL", "BUF", "CAR", "CHI", "CIN", "CLE", "DAL", "DEN", "DET", "GB", "HOU", "IND", "JAX", "KC",
         "LA", "LAC", "LV", "MIA", "MIN", "NE", "NO", "NYG", "NYJ", "PHI", "PIT", "SEA", "SF", "TB", "TEN", "WAS"]
GAMES_PER_SEASON = 272
BOOKS = ("book0", "book1")
LAST_SEASON = 2024


def season_games(year: int) -> list[GameScheduled]:
    """A season's schedule: every team hosts in turn, a week apart per round of 16."""
    start = date(year, 9, 5)
    out = []
    for i in range(GAMES_PER_SEASON):
        week = i // 16
        home = TEAMS[(2 * i) % 32]
        away = TEAMS[(2 * i + 1 + week) % 32]
        if away == home:
            away = TEAMS[(2 * i + 3) % 32]
        out.append(ev.game(home=home, away=away, day=start + timedelta(days=7 * week + i % 3), week=week + 1,
                           season=str(year)))
    return out


def history(seasons: int) -> list[TeamRegistered | GameScheduled | PriceQuoted]:
    """The teams, then `seasons` seasons ending with LAST_SEASON, oldest first."""
    events: list[TeamRegistered | GameScheduled | PriceQuoted] = [ev.team(t) for t in TEAMS]
    for year in range(LAST_SEASON - seasons + 1, LAST_SEASON + 1):
        games = season_games(year)
        events += games
        events += ev.season_quotes(games, BOOKS, 1, seed=year, first_minute=year - LAST_SEASON, tag=f"h{year}")
    return events
