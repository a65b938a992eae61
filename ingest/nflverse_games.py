"""nflverse schedules and results (`games.csv`): teams, games, final scores and closing lines.

One row is one game. Events per row: the two teams, the game (kickoff from `gameday` +
`gametime` in America/New_York, stored UTC), a reschedule when this source moved a game it
named before, the final state when both scores are present, and the closing lines as price
quotes from the single book `nflverse` (source "nflverse closing lines").

nflverse gives no record times, so `source_ts` is fixed by rule (docs/ingest.md):
teams at their first kickoff in the file, the game and its closing lines at kickoff (a
closing line is the line at kickoff). A result has no time in the file: the final's
`source_ts` is an ordering time, kickoff + `FINAL_AFTER` (after the game's own reports), which
is never served as the source's time (`schemas.reference.untimed_result`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path

from ingest import csv_rows
from ingest.csv_rows import BadValue, Row
from ingest.identity import Team, kickoff_sort, local_kickoff, nfl_team
from ingest.nflverse import COMPETITION, SOURCE, SPORT, each_row
from ingest.prices import check_market
from ingest.records import RECORD_ERRORS, GameClaim, Identity, Item, Parsed, Record, Rejected, Resolution, reason_of
from schemas import bounds, natural_keys
from schemas.events import (
    AnyEvent, GameRescheduled, GameScheduled, GameStateChanged, KnownBy, Outcome, PriceQuoted, TeamRegistered,
)

NAME = "nflverse-games"
LINES_SOURCE = "nflverse closing lines"
LINES_BOOK = "nflverse"
# nflverse has no time for a result: a final is ordered this long after kickoff (never served)
FINAL_AFTER = timedelta(hours=4)
REQUIRED = ("game_id", "season", "game_type", "week", "gameday", "gametime", "away_team", "home_team")
ROUNDS = {"WC": "Wild Card", "DIV": "Divisional Round", "CON": "Conference Championship", "SB": "Super Bowl"}
# other IDs of the game worth keeping in known_by (old_game_id and pfr are not unique: see docs)
EXTRA_IDS = (("espn", "espn"), ("gsis", "nfl gsis"))


def parse(path: Path, ingest_ts: datetime, rows: list[Row] | None = None) -> Parsed:
    """Read a games CSV. `rows` narrows it to a subset of its rows (the sandbox slate)."""
    table = csv_rows.read_table(path, REQUIRED)
    width = len(table.header)
    chosen = table.rows if rows is None else rows
    context = _FileContext.of(table.rows)
    return Parsed(NAME, path.name, len(chosen), _items(chosen, width, context, ingest_ts))


class _FileContext:
    """What a row cannot know alone: each team's home stadiums and first kickoff in the file."""

    def __init__(self) -> None:
        self.home_stadiums: dict[tuple[str, str], set[str]] = defaultdict(set)
        self.first_kickoff: dict[str, datetime] = {}

    @classmethod
    def of(cls, rows: list[Row]) -> _FileContext:
        ctx = cls()
        for row in rows:
            if csv_rows.row_problem(row):
                continue
            try:
                home, away = nfl_team(csv_rows.required(row, "home_team")), nfl_team(csv_rows.required(row, "away_team"))
                at, day = _kickoff(row)
                season = csv_rows.season(row)
                sort = kickoff_sort(COMPETITION, at, day)
                stadium = csv_rows.text(row, "stadium_id")
                home_game = csv_rows.text(row, "location") == "Home"
            except RECORD_ERRORS:  # the row itself is rejected when it is read
                continue
            for t in (home, away):
                if t.key not in ctx.first_kickoff or sort < ctx.first_kickoff[t.key]:
                    ctx.first_kickoff[t.key] = sort
            if stadium and home_game:
                ctx.home_stadiums[(season, home.key)].add(stadium)
        return ctx


def _kickoff(row: Row) -> tuple[datetime | None, date]:
    raw_day = csv_rows.required(row, "gameday")
    try:
        day = date.fromisoformat(raw_day)
    except ValueError:
        raise BadValue(f"gameday is not a date: {raw_day[:40]!r}") from None
    if problem := bounds.year_problem(day, "gameday"):
        raise BadValue(problem)
    clock_text = csv_rows.text(row, "gametime")
    clock: time | None = None
    if clock_text is not None:
        try:
            clock = datetime.strptime(clock_text, "%H:%M").time()
        except ValueError:
            raise BadValue(f"gametime is not HH:MM: {clock_text[:40]!r}") from None
    return local_kickoff(COMPETITION, day, clock), day


def _items(rows: list[Row], width: int, ctx: _FileContext, ingest_ts: datetime) -> Iterator[Item]:
    return each_row(rows, width, lambda index, location, row: _row(index, location, row, ctx, ingest_ts))


def _row(index: int, location: str, row: Row, ctx: _FileContext, ingest_ts: datetime) -> Iterator[Item]:
    source_id = csv_rows.required(row, "game_id")
    season = csv_rows.season(row)
    week = csv_rows.integer(row, "week", 0, bounds.WEEK_MAX)
    game_type = csv_rows.required(row, "game_type")
    home = nfl_team(csv_rows.required(row, "home_team"))
    away = nfl_team(csv_rows.required(row, "away_team"))
    if home.team_id == away.team_id:
        raise BadValue(f"home and away are the same team ({home.key})")
    kickoff_at, day = _kickoff(row)
    kickoff_date = None if kickoff_at is not None else day
    at = kickoff_sort(COMPETITION, kickoff_at, kickoff_date)
    neutral = csv_rows.text(row, "location") == "Neutral"
    stadium_id = csv_rows.text(row, "stadium_id")
    venue = csv_rows.name(row, "stadium")
    if neutral and stadium_id and stadium_id in ctx.home_stadiums.get((season, home.key), ()):
        # a neutral-site game listed at the designated home team's own stadium: the source
        # copied the home venue (2025 international games); the real venue is unknown
        venue = None
    home_score = csv_rows.integer(row, "home_score", 0, bounds.SCORE_MAX)
    away_score = csv_rows.integer(row, "away_score", 0, bounds.SCORE_MAX)
    overtime = csv_rows.integer(row, "overtime", 0, 1)

    lines: list[tuple[str, Decimal | None, list[Outcome]]] = []
    for market, build_outcomes in (("h2h", _h2h), ("spreads", _spreads), ("totals", _totals)):
        try:
            quote = build_outcomes(row, home, away)
        except RECORD_ERRORS as exc:
            yield Rejected(index, f"{location} ({market} closing line)", row.raw, reason_of(exc))
            continue
        if quote is not None:
            lines.append((market, *quote))

    claim = GameClaim(
        SOURCE, source_id, COMPETITION, home.team_id, away.team_id, kickoff_at, kickoff_date, season, week,
    )
    known_by = [KnownBy(SOURCE, source_id)] + [
        KnownBy(label, value) for column, label in EXTRA_IDS if (value := csv_rows.text(row, column))
    ]
    name = f"{away.name} {'vs' if neutral else 'at'} {home.name}"
    if game_type in ROUNDS:
        name = f"{ROUNDS[game_type]}: {name}"
    season_type = game_type  # as the source names it: REG, WC, DIV, CON, SB

    def build(res: Resolution) -> list[AnyEvent]:
        resolved = res.game(claim)
        game_id = resolved.game_id
        events: list[AnyEvent] = [_team(t, ctx, ingest_ts) for t in (home, away)]
        events.append(GameScheduled(
            source=SOURCE, source_id=source_id, source_ts=at, ingest_ts=ingest_ts,
            game_id=game_id, sport=SPORT, competition=COMPETITION, season=season, week=week,
            season_type=season_type, name=name, home_team_id=home.team_id, away_team_id=away.team_id,
            kickoff_at=kickoff_at, kickoff_date=kickoff_date, venue=venue, neutral_site=neutral, known_by=known_by,
        ))
        if resolved.seen_before and (resolved.kickoff_at, resolved.kickoff_date) != (kickoff_at, kickoff_date):
            events.append(GameRescheduled(
                source=SOURCE, source_id=source_id, source_ts=at, ingest_ts=ingest_ts,
                game_id=game_id, kickoff_at=kickoff_at, kickoff_date=kickoff_date, venue=venue,
            ))
        for market, point, outcomes in lines:
            events.append(PriceQuoted(
                source=LINES_SOURCE, source_id=source_id, source_ts=at, ingest_ts=ingest_ts,
                game_id=game_id, market_id=natural_keys.market_id(game_id, "game", market, "full", None),
                book=LINES_BOOK, book_name="nflverse closing line", kind="game", market_type=market,
                point=point, outcomes=outcomes,
            ))
        if home_score is not None and away_score is not None:
            events.append(GameStateChanged(
                source=SOURCE, source_id=source_id, source_ts=at + FINAL_AFTER, ingest_ts=ingest_ts,
                game_id=game_id, status="final", score_home=home_score, score_away=away_score,
                period="OT" if overtime else "Q4", clock="00:00",
            ))
        return events

    identities = tuple(Identity("team", SOURCE, t.key, t.team_id) for t in (home, away))
    yield Record(index, location, row.raw, build, claims=(claim,), identities=identities)


def _team(t: Team, ctx: _FileContext, ingest_ts: datetime) -> TeamRegistered:
    return TeamRegistered(
        source=SOURCE, source_id=t.key, source_ts=ctx.first_kickoff[t.key], ingest_ts=ingest_ts,
        team_id=t.team_id, sport=SPORT, competition=COMPETITION, name=t.name, abbreviation=t.abbreviation,
        aliases=list(t.aliases), known_by=[KnownBy(SOURCE, t.key)],
    )


def _prices(row: Row, *columns: str) -> list[Decimal] | None:
    """The American prices of a closing line: all present, none, or an error if only some are."""
    values = [csv_rows.decimal(row, c, bounds.AMERICAN_MAX) for c in columns]
    if all(v is None for v in values):
        return None
    if any(v is None for v in values):
        missing = [c for c, v in zip(columns, values) if v is None]
        raise BadValue(f"incomplete closing line: {', '.join(missing)} empty")
    return values  # type: ignore[return-value]


def _h2h(row: Row, home: Team, away: Team) -> tuple[None, list[Outcome]] | None:
    prices = _prices(row, "home_moneyline", "away_moneyline")
    if prices is None:
        return None
    check_market(prices, "american", exchange=False)
    return None, [
        Outcome(selection="home", name=home.name, participant_id=home.team_id, price=prices[0], price_format="american"),
        Outcome(selection="away", name=away.name, participant_id=away.team_id, price=prices[1], price_format="american"),
    ]


def _spreads(row: Row, home: Team, away: Team) -> tuple[Decimal, list[Outcome]] | None:
    spread = csv_rows.decimal(row, "spread_line", bounds.POINT_MAX)
    prices = _prices(row, "home_spread_odds", "away_spread_odds")
    if spread is None and prices is None:
        return None
    if spread is None or prices is None:
        raise BadValue("incomplete closing line: spread_line and its prices must come together")
    check_market(prices, "american", exchange=False)
    # spread_line is the home view, positive = home favoured: the home handicap is its negation
    home_point = spread if spread == 0 else -spread
    return home_point, [
        Outcome(selection="home", name=home.name, participant_id=home.team_id, price=prices[0],
                price_format="american", point=home_point),
        Outcome(selection="away", name=away.name, participant_id=away.team_id, price=prices[1],
                price_format="american", point=spread),
    ]


def _totals(row: Row, home: Team, away: Team) -> tuple[Decimal, list[Outcome]] | None:
    total = csv_rows.decimal(row, "total_line", bounds.POINT_MAX)
    prices = _prices(row, "over_odds", "under_odds")
    if total is None and prices is None:
        return None
    if total is None or prices is None:
        raise BadValue("incomplete closing line: total_line and its prices must come together")
    if problem := bounds.point_problem(total, "totals"):
        raise BadValue(problem)
    check_market(prices, "american", exchange=False)
    return total, [
        Outcome(selection="over", name="Over", price=prices[0], price_format="american", point=total),
        Outcome(selection="under", name="Under", price=prices[1], price_format="american", point=total),
    ]
