"""The sandbox day: Sunday 2024-09-08, the real week 1 Sunday slate, built from the samples.

Real parts (their own sources, through the same adapters as live ingest): the slate's teams,
games and closing lines (nflverse), the week 1 players, stat lines and injury reports of its
teams. Simulated parts (source "svc simulation", seeded per game): the books' pre-game
prices from 09:00 New York time and their moves to kickoff, and each game in play.

`pregame` is what `svc sample load` writes at once (reference data, injuries, opening
prices); `ingame` is what `svc sandbox play` plays in time order: pre-game moves, closing
lines at kickoff, the games, their finals and, five minutes after each final, its stat lines.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from pathlib import Path

import msgspec

from ingest import csv_rows, nflverse_games, nflverse_injuries, nflverse_player_stats
from ingest.batches import RunState, collect
from ingest.identity import local_kickoff, nfl_team
from ingest.records import GameClaim
from ingest.resolution import MemoryResolver
from ingest.sandbox.books import GameView
from ingest.sandbox.simulation import SOURCE, GameSpec, Scorer, quote_books, simulate
from ingest.team_aliases import NFL_BY_KEY
from schemas import natural_keys
from schemas.events import (
    AnyEvent, GameScheduled, GameStateChanged, InjuryReported, NewsPublished, PlayerRegistered, PlayerUpdated,
    StatLineRecorded, TeamRegistered, stamp,
)

DAY = date(2024, 9, 8)
SEASON, WEEK = "2024", 1
OPEN_AT = local_kickoff("nfl", DAY, time(9, 0))  # books open their prices
MOVES_AT = (local_kickoff("nfl", DAY, time(11, 0)), local_kickoff("nfl", DAY, time(12, 30)))
LAST_CALL = timedelta(minutes=5)  # a last pre-game move this long before kickoff
STATS_AFTER_FINAL = timedelta(minutes=5)
GAMES_FILE = Path("nflverse") / "games_2023_2025.csv"
STATS_FILE = Path("nflverse") / "player_stats_2024_weeks01-03.csv"
INJURIES_FILE = Path("nflverse") / "injuries_2024_weeks01-10.csv"
REFERENCE = (TeamRegistered, GameScheduled, PlayerRegistered, PlayerUpdated, InjuryReported, NewsPublished)


@dataclass
class Day:
    pregame: list[AnyEvent]  # stamped
    ingame: list[AnyEvent]  # stamped, in source time order
    claims: list[GameClaim]  # the slate's games, for the registry of the `test` dataset
    games: list[GameSpec]


def build_day(samples: Path, ingest_ts: datetime) -> Day:
    resolver = MemoryResolver()
    games_rows = [
        r for r in csv_rows.read_table(samples / GAMES_FILE).rows
        if r.fields.get("gameday") == DAY.isoformat() and r.fields.get("season") == SEASON
    ]
    games = collect(nflverse_games.parse(samples / GAMES_FILE, ingest_ts, rows=games_rows).items, resolver)
    teams = {nfl_team(r.fields[side]).key for r in games_rows for side in ("home_team", "away_team")}

    def week_rows(path: Path, team_column: str) -> list[csv_rows.Row]:
        return [
            r for r in csv_rows.read_table(path).rows
            if r.fields.get("season") == SEASON and r.fields.get("week") == str(WEEK)
            and r.fields.get(team_column) in teams
        ]

    stat_rows = week_rows(samples / STATS_FILE, "recent_team")
    injury_rows = week_rows(samples / INJURIES_FILE, "team")
    state = RunState()
    stats = collect(nflverse_player_stats.parse(samples / STATS_FILE, ingest_ts, rows=stat_rows).items, resolver, state)
    injuries = collect(nflverse_injuries.parse(samples / INJURIES_FILE, ingest_ts, rows=injury_rows).items, resolver, state)
    rejected = games.rejected + stats.rejected + injuries.rejected
    if rejected:
        raise ValueError(f"the sandbox slate has records that do not ingest: {rejected[0].location}: {rejected[0].reason}")

    scheduled = {e.source_id: e for e in games.events if isinstance(e, GameScheduled)}
    specs = [_spec(row, scheduled[row.fields["game_id"]], stat_rows) for row in games_rows]
    pregame: list[AnyEvent] = [e for e in games.events + stats.events + injuries.events if isinstance(e, REFERENCE)]
    ingame: list[AnyEvent] = [
        e for e in games.events if not isinstance(e, (*REFERENCE, GameStateChanged))  # closing lines, at kickoff
    ]
    finals: dict[str, datetime] = {}
    for spec in specs:
        opening, moves = _pregame_prices(spec)
        pregame.extend(opening)
        ingame.extend(moves)
        played, final_at = simulate(spec)
        ingame.extend(played)
        finals[spec.game_id] = final_at
    for e in stats.events:
        if isinstance(e, StatLineRecorded):
            # the real stat lines, published once the simulated game is over
            ingame.append(msgspec.structs.replace(e, source_ts=finals[e.game_id] + STATS_AFTER_FINAL))
    ingame.sort(key=lambda e: e.source_ts)
    # the simulation stamps its events with their own time; they are taken in now
    ingame = [e if e.source != SOURCE else msgspec.structs.replace(e, ingest_ts=ingest_ts) for e in ingame]
    pregame = [e if e.source != SOURCE else msgspec.structs.replace(e, ingest_ts=ingest_ts) for e in pregame]
    claims = [
        GameClaim(nflverse_games.SOURCE, g.source_id, "nfl", g.home_team_id, g.away_team_id, g.kickoff_at,
                  g.kickoff_date, g.season, g.week)
        for g in scheduled.values()
    ]
    return Day([stamp(e) for e in pregame], [stamp(e) for e in ingame], claims, specs)


def _spec(row: csv_rows.Row, game: GameScheduled, stat_rows: list[csv_rows.Row]) -> GameSpec:
    home, away = nfl_team(row.fields["home_team"]), nfl_team(row.fields["away_team"])
    spread = csv_rows.decimal(row, "spread_line")
    total = csv_rows.decimal(row, "total_line")
    assert game.kickoff_at is not None
    return GameSpec(
        source_id=game.source_id, game_id=game.game_id, kickoff_at=game.kickoff_at, home=home, away=away,
        home_label=NFL_BY_KEY[home.key].nickname, away_label=NFL_BY_KEY[away.key].nickname,
        home_score=int(row.fields["home_score"]), away_score=int(row.fields["away_score"]),
        overtime=row.fields.get("overtime") == "1",
        expected_margin=float(spread) if spread is not None else 0.0,
        expected_total=float(total) if total is not None else 44.0,
        touchdowns={t.team_id: _touchdowns(t.key, stat_rows, row) for t in (home, away)},
    )


def _touchdowns(team_key: str, stat_rows: list[csv_rows.Row], game_row: csv_rows.Row) -> tuple[Scorer, ...]:
    """The team's real touchdowns that day, by scorer, as its players' stat lines tell them."""
    mine = [r for r in stat_rows if r.fields.get("recent_team") == team_key]
    side = "home" if game_row.fields["home_team"] == team_key else "away"
    passers: list[str] = []
    for r in mine:
        passers += [r.fields["player_display_name"]] * int(csv_rows.integer(r, "passing_tds") or 0)
    starter = game_row.fields.get(f"{side}_qb_name") or None
    out: list[Scorer] = []
    for r in mine:
        name = r.fields["player_display_name"]
        for _ in range(csv_rows.integer(r, "receiving_tds") or 0):
            out.append(Scorer("pass", name, passers.pop(0) if passers else starter))
        out += [Scorer("run", name)] * (csv_rows.integer(r, "rushing_tds") or 0)
        out += [Scorer("special", name)] * (csv_rows.integer(r, "special_teams_tds") or 0)
    return tuple(out)


def _pregame_prices(spec: GameSpec) -> tuple[list[AnyEvent], list[AnyEvent]]:
    """Books open off the closing line by a seeded amount and move to it by kickoff."""
    rng = random.Random(f"{SOURCE}|{spec.source_id}|pre-game")
    markets = {m: natural_keys.market_id(spec.game_id, "game", m, "full", None) for m in ("h2h", "spreads", "totals")}
    margin_off = rng.choice((-1.5, -1.0, -0.5, 0.5, 1.0, 1.5))
    total_off = rng.choice((-2.0, -1.0, 1.0, 2.0))
    seq = iter(range(1, 10_000))
    times = [OPEN_AT, *(t for t in MOVES_AT if t < spec.kickoff_at - LAST_CALL), spec.kickoff_at - LAST_CALL]
    quoted: list[list[AnyEvent]] = []
    for i, at in enumerate(times):
        share = 1 - i / (len(times) - 1)  # the opening offset left at this moment
        view = GameView(0, 0, 1.0, spec.expected_margin + margin_off * share, spec.expected_total + total_off * share)
        quoted.append(quote_books(spec, markets, view, at, rng, lambda: f"{spec.source_id}#pre{next(seq)}"))
    return quoted[0], [e for q in quoted[1:] for e in q]

