"""Read models filled from the real sample data with plain SQL, for API tests.

Until the projector fills the read models, this builds the rows it would write, from the files
in `ingest/samples/`: nflverse schedules with real final scores and closing lines (as
single-book consensus lines), nflverse 2024 weekly player stats (weeks 1-3) as game and season
lines, nflverse 2024 injury reports, The Odds API's 2022 NFL opener (19 books: a real
multi-book consensus with main and alternate spread lines) and its 2024 EPL 3-way prices.
Consensus follows the projection issue: per eligible book the no-vig probabilities, the median
per outcome renormalised; the median decimal price; hold = 1 - 1 / sum(1 / price).
"""

from __future__ import annotations

import csv
import json
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import asyncpg

from domain import prices
from domain.devig import METHODS, devig_floats, hold as hold_of
from projections import stat_rules
from schemas.natural_keys import competition_id, game_id, market_id, player_id, season_id, sport_id, team_id
from schemas.reference import COMPETITIONS, SPORTS

SAMPLES = Path(__file__).resolve().parents[2] / "ingest" / "samples"
UTC = timezone.utc
EASTERN = ZoneInfo("America/New_York")
NFLVERSE = "nflverse"
ODDS_API = "The Odds API"
# when the schedule snapshot was read (the file's last scored game is 2025-12-07)
SNAPSHOT_TS = datetime(2025, 12, 8, 12, 0, tzinfo=UTC)
EXCHANGES = {"betfair", "matchbook", "betfair_ex_eu", "betfair_ex_uk", "smarkets"}

NFL_TEAMS = {
    "ARI": "Arizona Cardinals", "ATL": "Atlanta Falcons", "BAL": "Baltimore Ravens", "BUF": "Buffalo Bills",
    "CAR": "Carolina Panthers", "CHI": "Chicago Bears", "CIN": "Cincinnati Bengals", "CLE": "Cleveland Browns",
    "DAL": "Dallas Cowboys", "DEN": "Denver Broncos", "DET": "Detroit Lions", "GB": "Green Bay Packers",
    "HOU": "Houston Texans", "IND": "Indianapolis Colts", "JAX": "Jacksonville Jaguars", "KC": "Kansas City Chiefs",
    "LA": "Los Angeles Rams", "LAC": "Los Angeles Chargers", "LV": "Las Vegas Raiders", "MIA": "Miami Dolphins",
    "MIN": "Minnesota Vikings", "NE": "New England Patriots", "NO": "New Orleans Saints", "NYG": "New York Giants",
    "NYJ": "New York Jets", "PHI": "Philadelphia Eagles", "PIT": "Pittsburgh Steelers", "SEA": "Seattle Seahawks",
    "SF": "San Francisco 49ers", "TB": "Tampa Bay Buccaneers", "TEN": "Tennessee Titans", "WAS": "Washington Commanders",
}
NFL_BY_NAME = {name: abbr for abbr, name in NFL_TEAMS.items()}
# player-stats columns that are labels, not stats
_STAT_LABELS = {
    "player_id", "player_name", "player_display_name", "position", "position_group", "headshot_url",
    "recent_team", "season", "week", "season_type", "opponent_team",
}


def american_to_decimal(american: int | float) -> float:
    return prices.decimal_of_american(float(american))


def _prov(source: str, source_ts: datetime, source_id: str | None = None, ingest_ts: datetime | None = None) -> dict:
    out: dict[str, Any] = {
        "source": source, "source_ts": source_ts.isoformat(), "ingest_ts": (ingest_ts or source_ts).isoformat(),
    }
    if source_id is not None:
        out["known_by"] = [{"source": source, "source_id": source_id}]
    return out


def nfl_team(abbr: str) -> str:
    return team_id("nfl", abbr)


def nfl_game_id(row: dict[str, str]) -> str:
    return game_id("nfl", nfl_team(row["home_team"]), nfl_team(row["away_team"]), date.fromisoformat(row["gameday"]))


def nfl_player(gsis: str) -> str:
    return player_id("nfl", gsis)


def _probabilities(decimals: list[float]) -> dict[str, list[float]]:
    """Per devig method, one book's no-vig probabilities in outcome order."""
    return {m: list(devig_floats(m, decimals).probabilities) for m in METHODS}


def consensus(books: list[list[float]]) -> tuple[list[float], dict[str, list[float]], float]:
    """Consensus of eligible books' decimal prices (one list per book, same outcome order):
    median price per outcome; per method the median no-vig probability renormalised; hold."""
    n = len(books[0])
    prices = [statistics.median(b[i] for b in books) for i in range(n)]
    per_book = [_probabilities(b) for b in books]
    probabilities = {}
    for m in METHODS:
        medians = [statistics.median(p[m][i] for p in per_book) for i in range(n)]
        total = sum(medians)
        probabilities[m] = [x / total for x in medians]
    hold = hold_of(prices)
    return prices, probabilities, hold


@dataclass
class Rows:
    """Rows per read-model table, inserted in one go."""

    tables: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))

    def add(self, table: str, **row: Any) -> None:
        self.tables[table].append(row)


def _line(rows: Rows, mid: str, point: float | None, is_main: bool, outcomes: list[dict], books: list[list[float]],
          source: str, as_of: datetime) -> None:
    prices, probabilities, hold = consensus(books)
    for i, o in enumerate(outcomes):
        o["price"] = prices[i]
        o["probability"] = {m: probabilities[m][i] for m in METHODS}
    rows.add(
        "market_lines", market_id=mid, line_key="" if point is None else str(point), point=point, is_main=is_main,
        books=len(books), hold=hold, outcomes=outcomes, methods={}, source=source, as_of=as_of,
        provenance={"source": source, "source_ts": as_of.isoformat(), "ingest_ts": as_of.isoformat()},
    )


def _market(rows: Rows, gid: str, mtype: str, main_point: float | None, books: int, source: str, as_of: datetime,
            prov: dict) -> str:
    mid = market_id(gid, "game", mtype, "full", None)
    rows.add(
        "markets", id=mid, game_id=gid, kind="game", type=mtype, period="full", participant_id=None, name=None,
        status="open", main_point=main_point, books=books, source=source, as_of=as_of, provenance=prov, last_seq=1,
    )
    return mid


def _reference(rows: Rows) -> None:
    ts = datetime(2024, 1, 1, tzinfo=UTC)
    for s in SPORTS.values():
        rows.add("sports", id=sport_id(s.slug), slug=s.slug, name=s.name, source="svc registry", as_of=ts,
                 provenance=_prov("svc registry", ts))
    for c in COMPETITIONS.values():
        rows.add("competitions", id=competition_id(c.slug), slug=c.slug, name=c.name, sport=c.sport,
                 timezone=c.timezone, source="svc registry", as_of=ts, provenance=_prov("svc registry", ts))
        rows.add("search_index", id=competition_id(c.slug), kind="competition", name=c.name, competition=c.slug,
                 context={}, terms=f"{c.name} {c.slug.replace('_', ' ')}".lower(), as_of=ts)
    for abbr, name in NFL_TEAMS.items():
        tid = nfl_team(abbr)
        rows.add("teams", id=tid, sport="american_football", competition="nfl", name=name, abbreviation=abbr,
                 aliases=[], source=NFLVERSE, as_of=ts, provenance=_prov(NFLVERSE, ts, abbr))
        rows.add("search_index", id=tid, kind="team", name=name, competition="nfl", context={},
                 terms=f"{name} {abbr}".lower(), as_of=ts)


def _nfl_schedule(rows: Rows) -> list[dict[str, str]]:
    with open(SAMPLES / "nflverse" / "games_2023_2025.csv", newline="") as f:
        games = list(csv.DictReader(f))
    seasons: dict[str, list[date]] = defaultdict(list)
    for g in games:
        seasons[g["season"]].append(date.fromisoformat(g["gameday"]))
    for label, days in seasons.items():
        rows.add("seasons", id=season_id("nfl", label), competition="nfl", label=label, year=int(label),
                 starts_on=min(days), ends_on=max(days), source=NFLVERSE, as_of=SNAPSHOT_TS)
    for g in games:
        gid = nfl_game_id(g)
        kickoff = datetime.combine(date.fromisoformat(g["gameday"]), time.fromisoformat(g["gametime"]), EASTERN)
        kickoff = kickoff.astimezone(UTC)
        final = g["home_score"] != "" and g["away_score"] != ""
        as_of = kickoff + timedelta(hours=4) if final else SNAPSHOT_TS
        prov = _prov(NFLVERSE, as_of, g["game_id"], SNAPSHOT_TS)
        home, away = NFL_TEAMS[g["home_team"]], NFL_TEAMS[g["away_team"]]
        name = f"{away} at {home}"
        rows.add(
            "games", id=gid, name=name, sport="american_football", competition="nfl", season=g["season"],
            week=int(g["week"]), season_type=g["game_type"], kickoff_at=kickoff, kickoff_date=None,
            kickoff_sort=kickoff, venue=g["stadium"] or None, neutral_site=g["location"] == "Neutral",
            home_team_id=nfl_team(g["home_team"]), away_team_id=nfl_team(g["away_team"]),
            status="final" if final else "scheduled",
            score_home=int(g["home_score"]) if final else None, score_away=int(g["away_score"]) if final else None,
            period=None, clock=None, possession=None, last_play=None,
            state_provenance=_prov(NFLVERSE, as_of, g["game_id"], SNAPSHOT_TS) if final else None,
            source=NFLVERSE, as_of=as_of, provenance=prov, last_seq=1 if final else 0,
        )
        rows.add("search_index", id=gid, kind="game", name=name, competition="nfl", context={},
                 terms=f"{name} {g['away_team']} {g['home_team']} {g['season']} week {g['week']}".lower(), as_of=as_of)
        _closing_lines(rows, g, gid, as_of)
    return games


def _closing_lines(rows: Rows, g: dict[str, str], gid: str, as_of: datetime) -> None:
    """nflverse closing lines: each market a consensus of one book."""
    source = "nflverse closing line"
    prov = _prov(source, as_of, g["game_id"], SNAPSHOT_TS)
    home, away = nfl_team(g["home_team"]), nfl_team(g["away_team"])
    home_name, away_name = NFL_TEAMS[g["home_team"]], NFL_TEAMS[g["away_team"]]
    if g["home_moneyline"] and g["away_moneyline"]:
        mid = _market(rows, gid, "h2h", None, 1, source, as_of, prov)
        book = [american_to_decimal(int(g["home_moneyline"])), american_to_decimal(int(g["away_moneyline"]))]
        _line(rows, mid, None, True, [
            {"selection": "home", "name": home_name, "participant_id": home, "point": None},
            {"selection": "away", "name": away_name, "participant_id": away, "point": None},
        ], [book], source, as_of)
    if g["spread_line"] and g["home_spread_odds"] and g["away_spread_odds"]:
        point = -float(g["spread_line"])  # nflverse: positive means the home side is favoured
        mid = _market(rows, gid, "spreads", point, 1, source, as_of, prov)
        book = [american_to_decimal(int(g["home_spread_odds"])), american_to_decimal(int(g["away_spread_odds"]))]
        _line(rows, mid, point, True, [
            {"selection": "home", "name": home_name, "participant_id": home, "point": point},
            {"selection": "away", "name": away_name, "participant_id": away, "point": -point},
        ], [book], source, as_of)
    if g["total_line"] and g["over_odds"] and g["under_odds"]:
        point = float(g["total_line"])
        mid = _market(rows, gid, "totals", point, 1, source, as_of, prov)
        book = [american_to_decimal(int(g["over_odds"])), american_to_decimal(int(g["under_odds"]))]
        _line(rows, mid, point, True, [
            {"selection": "over", "name": "Over", "participant_id": None, "point": point},
            {"selection": "under", "name": "Under", "participant_id": None, "point": point},
        ], [book], source, as_of)


@dataclass
class OddsApiGame:
    """The 2022 NFL opener with per-book prices, kept for independent recomputation in tests."""

    game_id: str
    event: dict[str, Any]


def _odds_api_nfl_opener(rows: Rows) -> OddsApiGame:
    with open(SAMPLES / "oddsapi" / "nfl_2022_h2h_spreads_totals_american.json") as f:
        event = json.load(f)[0]  # Buffalo Bills at Los Angeles Rams, 2022-09-09
    home_abbr, away_abbr = NFL_BY_NAME[event["home_team"]], NFL_BY_NAME[event["away_team"]]
    kickoff = datetime.fromisoformat(event["commence_time"].replace("Z", "+00:00"))
    gid = game_id("nfl", nfl_team(home_abbr), nfl_team(away_abbr), kickoff.astimezone(EASTERN).date())
    newest = max(datetime.fromisoformat(b["last_update"].replace("Z", "+00:00")) for b in event["bookmakers"])
    name = f"{event['away_team']} at {event['home_team']}"
    rows.add(
        "games", id=gid, name=name, sport="american_football", competition="nfl", season="2022", week=1,
        season_type="REG", kickoff_at=kickoff, kickoff_date=None, kickoff_sort=kickoff, venue="SoFi Stadium",
        neutral_site=False, home_team_id=nfl_team(home_abbr), away_team_id=nfl_team(away_abbr), status="scheduled",
        score_home=None, score_away=None, period=None, clock=None, possession=None, last_play=None,
        state_provenance=None, source=ODDS_API, as_of=newest, provenance=_prov(ODDS_API, newest, event["id"]),
        last_seq=0,
    )
    for mtype in ("h2h", "spreads", "totals"):
        by_point: dict[float | None, list[list[float]]] = defaultdict(list)
        for b in event["bookmakers"]:
            if b["key"] in EXCHANGES:
                continue
            for m in b["markets"]:
                if m["key"] != mtype:
                    continue
                outcomes = {o["name"]: o for o in m["outcomes"]}
                if mtype == "totals":
                    order = [outcomes.get("Over"), outcomes.get("Under")]
                else:
                    order = [outcomes.get(event["home_team"]), outcomes.get(event["away_team"])]
                if None in order:
                    continue
                point = None if mtype == "h2h" else float(order[0]["point"])
                by_point[point].append([american_to_decimal(o["price"]) for o in order])
        if not by_point:
            continue
        # main line: the point quoted by most books
        main = max(by_point, key=lambda p: (len(by_point[p]), -(abs(p) if p is not None else 0)))
        mid = _market(rows, gid, mtype, main, len(by_point[main]), ODDS_API, newest, _prov(ODDS_API, newest, event["id"]))
        for point, books in sorted(by_point.items(), key=lambda kv: (kv[0] is not None, kv[0] or 0)):
            if mtype == "totals":
                outcomes = [
                    {"selection": "over", "name": "Over", "participant_id": None, "point": point},
                    {"selection": "under", "name": "Under", "participant_id": None, "point": point},
                ]
            else:
                outcomes = [
                    {"selection": "home", "name": event["home_team"], "participant_id": nfl_team(home_abbr),
                     "point": point},
                    {"selection": "away", "name": event["away_team"], "participant_id": nfl_team(away_abbr),
                     "point": None if point is None else -point},
                ]
            _line(rows, mid, point, point == main, outcomes, books, ODDS_API, newest)
    return OddsApiGame(game_id=gid, event=event)


def _epl(rows: Rows) -> None:
    """2024 EPL 3-way prices (one book): soccer games on the slate, a three-outcome market."""
    with open(SAMPLES / "oddsapi" / "soccer_epl_2024_h2h_decimal.json") as f:
        events = json.load(f)
    ts = datetime(2024, 1, 1, tzinfo=UTC)
    rows.add("seasons", id=season_id("epl", "2024-25"), competition="epl", label="2024-25", year=2024,
             starts_on=date(2024, 8, 16), ends_on=date(2025, 5, 25), source=ODDS_API, as_of=ts)
    teams: set[str] = set()
    london = ZoneInfo("Europe/London")
    for e in events:
        for name in (e["home_team"], e["away_team"]):
            if name not in teams:
                teams.add(name)
                rows.add("teams", id=team_id("epl", name.lower()), sport="soccer", competition="epl", name=name,
                         abbreviation=None, aliases=[], source=ODDS_API, as_of=ts, provenance=_prov(ODDS_API, ts))
                rows.add("search_index", id=team_id("epl", name.lower()), kind="team", name=name, competition="epl",
                         context={}, terms=name.lower(), as_of=ts)
        kickoff = datetime.fromisoformat(e["commence_time"].replace("Z", "+00:00"))
        home, away = team_id("epl", e["home_team"].lower()), team_id("epl", e["away_team"].lower())
        gid = game_id("epl", home, away, kickoff.astimezone(london).date())
        market = e["bookmakers"][0]["markets"][0]
        as_of = datetime.fromisoformat(market["last_update"].replace("Z", "+00:00"))
        name = f"{e['home_team']} v {e['away_team']}"
        rows.add(
            "games", id=gid, name=name, sport="soccer", competition="epl", season="2024-25", week=None,
            season_type=None, kickoff_at=kickoff, kickoff_date=None, kickoff_sort=kickoff, venue=None,
            neutral_site=False, home_team_id=home, away_team_id=away, status="scheduled", score_home=None,
            score_away=None, period=None, clock=None, possession=None, last_play=None, state_provenance=None,
            source=ODDS_API, as_of=as_of, provenance=_prov(ODDS_API, as_of, e["id"]), last_seq=0,
        )
        prices = {o["name"]: float(o["price"]) for o in market["outcomes"]}
        mid = _market(rows, gid, "h2h", None, 1, ODDS_API, as_of, _prov(ODDS_API, as_of, e["id"]))
        _line(rows, mid, None, True, [
            {"selection": "home", "name": e["home_team"], "participant_id": home, "point": None},
            {"selection": "away", "name": e["away_team"], "participant_id": away, "point": None},
            {"selection": "draw", "name": "Draw", "participant_id": None, "point": None},
        ], [[prices[e["home_team"]], prices[e["away_team"]], prices["Draw"]]], ODDS_API, as_of)


def _stat(value: str) -> int | str | None:
    if value == "":
        return None
    return int(value) if value.lstrip("-").isdigit() else value  # decimals keep their exact digits


def _players(rows: Rows, schedule: list[dict[str, str]]) -> None:
    games_by_team_week = {}
    kickoff_by_game = {}
    for g in schedule:
        if g["season"] == "2024":
            gid = nfl_game_id(g)
            games_by_team_week[(g["home_team"], int(g["week"]))] = gid
            games_by_team_week[(g["away_team"], int(g["week"]))] = gid
            kickoff_by_game[gid] = datetime.combine(date.fromisoformat(g["gameday"]), time(23, 59), EASTERN)
    players: dict[str, dict[str, Any]] = {}
    with open(SAMPLES / "nflverse" / "player_stats_2024_weeks01-03.csv", newline="") as f:
        stat_rows = list(csv.DictReader(f))
    season_totals: dict[str, dict[str, Decimal]] = defaultdict(lambda: defaultdict(Decimal))
    games_played: dict[str, int] = defaultdict(int)
    for r in stat_rows:
        pid = nfl_player(r["player_id"])
        week = int(r["week"])
        gid = games_by_team_week.get((r["recent_team"], week))
        as_of = kickoff_by_game[gid].astimezone(UTC) if gid else SNAPSHOT_TS
        players[r["player_id"]] = {"name": r["player_display_name"], "position": r["position"],
                                   "team": r["recent_team"], "as_of": as_of}
        stats = {k: v for k, v in ((k, _stat(r[k])) for k in r if k not in _STAT_LABELS) if v is not None}
        rows.add(
            "stat_lines", line_key=f"{pid}:{gid}:{NFLVERSE}", subject_id=pid, team_id=nfl_team(r["recent_team"]),
            game_id=gid, season=r["season"], week=week, season_type="regular", basis="total", stats=stats,
            source=NFLVERSE, as_of=as_of, provenance=_prov(NFLVERSE, as_of, f"{r['player_id']}:{r['week']}"),
        )
        games_played[pid] += 1
        for k, v in stats.items():
            if stat_rules.is_summed(k):  # rates never add up (the projector's rule)
                season_totals[pid][k] += Decimal(v)
    for gsis, p in players.items():
        pid = nfl_player(gsis)
        totals = {k: int(v) if v == v.to_integral_value() and "." not in str(v) else str(v)
                  for k, v in season_totals[pid].items()}
        per_game = {k: str((Decimal(v) / games_played[pid]).quantize(Decimal("0.0001"))) for k, v in totals.items()}
        for basis, stats in (("total", totals), ("per_game", per_game)):
            rows.add(
                "stat_lines", line_key=f"{pid}:2024:regular:{basis}:{NFLVERSE}", subject_id=pid,
                team_id=nfl_team(p["team"]), game_id=None, season="2024", week=None, season_type="regular",
                basis=basis, stats=stats, source=NFLVERSE, as_of=p["as_of"], provenance=_prov(NFLVERSE, p["as_of"]),
            )
    _injuries(rows, players, games_by_team_week)
    for gsis, p in players.items():
        pid = nfl_player(gsis)
        team = nfl_team(p["team"]) if p["team"] in NFL_TEAMS else None
        rows.add("players", id=pid, sport="american_football", competition="nfl", name=p["name"],
                 position=p["position"] or None, team_id=team, source=NFLVERSE, as_of=p["as_of"],
                 provenance=_prov(NFLVERSE, p["as_of"], gsis))
        rows.add("search_index", id=pid, kind="player", name=p["name"], competition="nfl", context={},
                 terms=f"{p['name']} {p['position']} {p['team']}".lower(), as_of=p["as_of"])


def _injuries(rows: Rows, players: dict[str, dict[str, Any]], games_by_team_week: dict) -> None:
    with open(SAMPLES / "nflverse" / "injuries_2024_weeks01-10.csv", newline="") as f:
        reports = list(csv.DictReader(f))
    by_player: dict[str, list[dict[str, str]]] = defaultdict(list)
    for r in reports:
        by_player[r["gsis_id"]].append(r)
    for gsis, history in by_player.items():
        history.sort(key=lambda r: (int(r["week"]), r["date_modified"]))
        latest = history[-1]
        reported = datetime.fromisoformat(latest["date_modified"].replace("Z", "+00:00"))
        if gsis not in players:
            players[gsis] = {"name": latest["full_name"], "position": latest["position"], "team": latest["team"],
                             "as_of": reported}
        players[gsis]["as_of"] = max(players[gsis]["as_of"], reported)
        pid = nfl_player(gsis)
        week = int(latest["week"])
        gid = games_by_team_week.get((latest["team"], week))
        practice = " ".join(latest["practice_status"].split()) or None
        status = latest["report_status"] or None
        rows.add(
            "injuries", player_id=pid, team_id=nfl_team(latest["team"]), status=status, roster_status=None,
            detail=latest["report_primary_injury"] or latest["practice_primary_injury"] or None, practice=practice,
            game_day="out" if status == "Out" else None, season=int(latest["season"]), week=week, game_id=gid,
            reported_at=reported, source=NFLVERSE, as_of=reported, provenance=_prov(NFLVERSE, reported, gsis),
        )
        designated = [r for r in history if r["report_status"]]
        if designated:
            last = designated[-1]
            ts = datetime.fromisoformat(last["date_modified"].replace("Z", "+00:00"))
            rows.add("availability", player_id=pid, source=NFLVERSE, status=last["report_status"].lower(),
                     game_id=games_by_team_week.get((last["team"], int(last["week"]))), season=int(last["season"]),
                     week=int(last["week"]), as_of=ts, provenance=_prov(NFLVERSE, ts, gsis))
        for r in designated[-5:]:
            ts = datetime.fromisoformat(r["date_modified"].replace("Z", "+00:00"))
            injury = r["report_primary_injury"] or "undisclosed"
            rows.add("news", player_id=pid, event_id=f"evt_{gsis}_{r['week']}_{r['date_modified']}", kind="injury",
                     headline=f"{r['full_name']} ({injury.lower()}) listed {r['report_status'].lower()} for week {r['week']}",
                     published_at=ts, source=NFLVERSE, as_of=ts, provenance=_prov(NFLVERSE, ts, gsis))


@dataclass
class Sample:
    schedule: list[dict[str, str]]
    opener: OddsApiGame


def build() -> tuple[Rows, Sample]:
    rows = Rows()
    _reference(rows)
    schedule = _nfl_schedule(rows)
    opener = _odds_api_nfl_opener(rows)
    _epl(rows)
    _players(rows, schedule)
    return rows, Sample(schedule=schedule, opener=opener)


async def insert(conn: asyncpg.Connection, schema: str, rows: Rows) -> None:
    """Insert every row (JSON columns as text, cast by Postgres)."""
    async with conn.transaction():
        for table, items in rows.tables.items():
            columns = list(items[0])
            types = await conn.fetch(
                "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2",
                schema, table,
            )
            jsonb = {r["column_name"] for r in types if r["data_type"] == "jsonb"}
            placeholders = ", ".join(
                f"${i}::text::jsonb" if c in jsonb else f"${i}" for i, c in enumerate(columns, start=1)
            )
            sql = f'INSERT INTO "{schema}".{table} ({", ".join(columns)}) VALUES ({placeholders})'
            await conn.executemany(
                sql, [[json.dumps(r[c]) if c in jsonb else r[c] for c in columns] for r in items],
            )
    for table in rows.tables:  # planner statistics, as a served database has them
        await conn.execute(f'ANALYZE "{schema}".{table}')


async def load(conn: asyncpg.Connection, schema: str = "live") -> Sample:
    rows, sample = build()
    await insert(conn, schema, rows)
    return sample
