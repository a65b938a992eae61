"""Canonical events for projection tests and benchmarks, built straight from the structs.

Every builder stamps the event (deterministic `event_id`), as ingest does. Times are minutes
after a fixed base so tests read naturally: `quote(..., minute=5)`.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Sequence

from schemas.events import (
    GameRescheduled, GameScheduled, GameStateChanged, InjuryReported, KnownBy, MarketReopened, MarketSuspended,
    NewsPublished, Outcome, PlayerRegistered, PlayerUpdated, PriceQuoted, StatLineRecorded, TeamRegistered, stamp,
)
from schemas.natural_keys import game_id, market_id, player_id, team_id

BASE = datetime(2024, 9, 5, 12, 0, tzinfo=timezone.utc)
SOURCE = "The Odds API"
NFLVERSE = "nflverse"


def at(minute: float) -> datetime:
    return BASE + timedelta(minutes=minute)


def team(key: str, name: str | None = None, *, minute: float = 0, aliases: Sequence[str] = (),
         source: str = NFLVERSE) -> TeamRegistered:
    return stamp(TeamRegistered(
        source=source, source_id=key, source_ts=at(minute), ingest_ts=at(minute), team_id=team_id("nfl", key),
        sport="american_football", competition="nfl", name=name or f"Team {key}", abbreviation=key,
        aliases=list(aliases), known_by=[KnownBy(source, key)],
    ))


def game(home: str = "KC", away: str = "BAL", *, day: date = date(2024, 9, 5), minute: float = 0,
         kickoff: datetime | None = None, week: int | None = 1, season: str | None = "2024",
         source: str = NFLVERSE, venue: str | None = None) -> GameScheduled:
    home_id, away_id = team_id("nfl", home), team_id("nfl", away)
    gid = game_id("nfl", home_id, away_id, day)
    return stamp(GameScheduled(
        source=source, source_id=f"{day}_{away}_{home}", source_ts=at(minute), ingest_ts=at(minute), game_id=gid,
        sport="american_football", competition="nfl", season=season, week=week, season_type="REG",
        name=f"{away} at {home}", home_team_id=home_id, away_team_id=away_id,
        kickoff_at=kickoff if kickoff is not None else datetime.combine(day, datetime.min.time(), timezone.utc)
        + timedelta(hours=24, minutes=20),
        venue=venue, known_by=[KnownBy(source, f"{day}_{away}_{home}")],
    ))


def rescheduled(gid: str, kickoff: datetime, *, minute: float = 1, venue: str | None = None) -> GameRescheduled:
    return stamp(GameRescheduled(
        source=NFLVERSE, source_id=gid, source_ts=at(minute), ingest_ts=at(minute), game_id=gid,
        kickoff_at=kickoff, venue=venue,
    ))


def state(gid: str, status: str = "live", *, minute: float = 1, home: int | None = 0, away: int | None = 0,
          period: str | None = "Q1", clock: str | None = "15:00", source: str = "sandbox",
          last_play: str | None = None) -> GameStateChanged:
    return stamp(GameStateChanged(
        source=source, source_id=gid, source_ts=at(minute), ingest_ts=at(minute), game_id=gid, status=status,
        score_home=home, score_away=away, period=period, clock=clock, last_play=last_play,
    ))


_SELECTIONS = {"h2h": ("home", "away"), "h2h_3way": ("home", "away", "draw"), "spreads": ("home", "away"),
               "totals": ("over", "under")}


def quote(gid: str, book: str, prices: Sequence[int | str | Decimal], *, market_type: str = "h2h",
          point: str | Decimal | None = None, minute: float = 0, fmt: str = "american", kind: str = "game",
          selections: Sequence[str] | None = None, period: str = "full", source: str = SOURCE,
          outcome_points: Sequence[str | None] | None = None) -> PriceQuoted:
    """One book's prices for a line; for spreads `point` is the home side's handicap."""
    selections = tuple(selections or _SELECTIONS[market_type])
    p = None if point is None else Decimal(str(point))
    outcomes = []
    for i, (sel, price) in enumerate(zip(selections, prices)):
        if outcome_points is not None:
            op = None if outcome_points[i] is None else Decimal(str(outcome_points[i]))
        elif p is None:
            op = None
        elif market_type == "spreads":
            op = p if sel == "home" else -p
        else:
            op = p
        outcomes.append(Outcome(selection=sel, name=sel.title(), price=Decimal(str(price)), price_format=fmt, point=op))
    mtype = "h2h" if market_type == "h2h_3way" else market_type
    return stamp(PriceQuoted(
        source=source, source_id=f"{gid}:{book}:{mtype}", source_ts=at(minute), ingest_ts=at(minute),
        game_id=gid, market_id=market_id(gid, kind, mtype, period, None), book=book, book_name=book.title(),
        kind=kind, market_type=mtype, period=period, point=p, outcomes=outcomes,
    ))


def suspended(gid: str, mid: str, *, book: str | None = None, minute: float = 1,
              reason: str | None = "touchdown review") -> MarketSuspended:
    return stamp(MarketSuspended(
        source=SOURCE, source_id=f"{mid}:{book}", source_ts=at(minute), ingest_ts=at(minute), game_id=gid,
        market_id=mid, book=book, reason=reason,
    ))


def reopened(gid: str, mid: str, *, book: str | None = None, minute: float = 2) -> MarketReopened:
    return stamp(MarketReopened(
        source=SOURCE, source_id=f"{mid}:{book}", source_ts=at(minute), ingest_ts=at(minute), game_id=gid,
        market_id=mid, book=book,
    ))


def player(key: str, name: str, *, team: str = "KC", position: str = "QB", minute: float = 0) -> PlayerRegistered:
    return stamp(PlayerRegistered(
        source=NFLVERSE, source_id=key, source_ts=at(minute), ingest_ts=at(minute), player_id=player_id("nfl", key),
        sport="american_football", competition="nfl", name=name, position=position, team_id=team_id("nfl", team),
        known_by=[KnownBy(NFLVERSE, key)],
    ))


def player_moved(pid: str, team: str, *, minute: float = 1) -> PlayerUpdated:
    return stamp(PlayerUpdated(
        source=NFLVERSE, source_id=pid, source_ts=at(minute), ingest_ts=at(minute), player_id=pid,
        team_id=team_id("nfl", team),
    ))


def injury(pid: str, status: str | None, *, week: int = 1, minute: float = 0, detail: str = "Ankle",
           season: int = 2024) -> InjuryReported:
    return stamp(InjuryReported(
        source=NFLVERSE, source_id=f"{pid}:{season}:{week}", source_ts=at(minute), ingest_ts=at(minute),
        player_id=pid, season=season, week=week, status=status, detail=detail, practice="Limited",
    ))


def news(pid: str, headline: str, *, minute: float = 0, kind: str = "news") -> NewsPublished:
    return stamp(NewsPublished(
        source="sandbox", source_id=headline, source_ts=at(minute), ingest_ts=at(minute), player_id=pid,
        kind=kind, headline=headline, published_at=at(minute),
    ))


def stat_line(pid: str, gid: str | None, week: int, stats: dict, *, minute: float = 0, team: str = "KC",
              season: str = "2024", source: str = NFLVERSE) -> StatLineRecorded:
    return stamp(StatLineRecorded(
        source=source, source_id=f"{pid}:{season}:{week}", source_ts=at(minute), ingest_ts=at(minute),
        player_id=pid, team_id=team_id("nfl", team), game_id=gid, season=season, week=week,
        season_type="regular", stats={k: (Decimal(v) if isinstance(v, str) else v) for k, v in stats.items()},
    ))


async def publish(settings, events, dataset: str = "live") -> None:
    """Append events to the dataset's feed topics, keyed by entity (as ingest does)."""
    from infra.kafka import make_producer
    from schemas.datasets import topic_name
    from schemas.events import encode, event_key, event_topic

    producer = make_producer(settings)
    await producer.start()
    try:
        futures = [
            await producer.send(topic_name(dataset, event_topic(e), settings.topic_namespace), encode(e),
                                key=event_key(e).encode())
            for e in events
        ]
        for f in futures:
            await f
    finally:
        await producer.stop()


def season_quotes(games: Sequence[GameScheduled], books: Sequence[str], rounds: int, *, seed: int = 1,
                  first_minute: float = 0, tag: str = "s") -> list[PriceQuoted]:
    """Many quotes fast (for long logs): each round every book quotes h2h, spreads and totals of
    every game, prices wandering around the line. Event IDs are deterministic counters."""
    import random

    rng = random.Random(seed)
    out = []
    n = 0
    ts0 = at(first_minute)
    for r in range(rounds):
        for g in games:
            gid = g.game_id
            for book in books:
                ts = ts0 + timedelta(minutes=r, seconds=rng.random() * 50)
                for mtype in ("h2h", "spreads", "totals"):
                    if mtype == "h2h":
                        point, sels, prices = None, ("home", "away"), (rng.choice((-150, -145, -140)), rng.choice((120, 125, 130)))
                        points = (None, None)
                    elif mtype == "spreads":
                        p = Decimal(rng.choice(("-3", "-3.5", "-2.5")))
                        point, sels, prices = p, ("home", "away"), (rng.choice((-115, -110, -105)), rng.choice((-115, -110, -105)))
                        points = (p, -p)
                    else:
                        p = Decimal(rng.choice(("47.5", "48", "48.5")))
                        point, sels, prices = p, ("over", "under"), (rng.choice((-115, -110, -105)), rng.choice((-115, -110, -105)))
                        points = (p, p)
                    n += 1
                    out.append(PriceQuoted(
                        event_id=f"evt_{tag}{n:012d}", source=SOURCE, source_id=f"{gid}:{book}:{mtype}", source_ts=ts,
                        ingest_ts=ts, game_id=gid, market_id=market_id(gid, "game", mtype, "full", None), book=book,
                        kind="game", market_type=mtype, point=point,
                        outcomes=[Outcome(selection=s, name=s.title(), price=Decimal(pr), price_format="american", point=pt)
                                  for s, pr, pt in zip(sels, prices, points)],
                    ))
    return out


def schedule(n: int, *, start: date = date(2024, 9, 5)) -> list[GameScheduled]:
    """`n` games of a season: every team hosts in turn, a week apart per round of 16."""
    teams = ["ARI", "ATL", "BAL", "BUF", "CAR", "CHI", "CIN", "CLE", "DAL", "DEN", "DET", "GB", "HOU", "IND", "JAX",
             "KC", "LA", "LAC", "LV", "MIA", "MIN", "NE", "NO", "NYG", "NYJ", "PHI", "PIT", "SEA", "SF", "TB", "TEN",
             "WAS"]
    out = []
    for i in range(n):
        week = i // 16
        home = teams[(2 * i) % 32]
        away = teams[(2 * i + 1 + week) % 32] if teams[(2 * i + 1 + week) % 32] != home else teams[(2 * i + 3) % 32]
        out.append(game(home=home, away=away, day=start + timedelta(days=7 * week + i % 3), week=week + 1))
    return out
