"""A seeded in-game simulation of one real game, consistent with its real final score.

Each team's final score is split into scoring plays (touchdowns with their conversions,
field goals, safeties) that add up to it; the plays are spread over alternating drives of a
60-minute game clock (overtime when the real game went to overtime), and the game clock is
mapped onto the day (40 minutes a quarter, breaks, halftime). Each drive ends in a state
change (period, clock, score, possession, `last_play` from templates); the simulated books
re-price after each one, markets are suspended around scores and at the final.
Same spec, same seed: the same events, on any machine.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from ingest.identity import Team
from ingest.sandbox import templates as T
from ingest.sandbox.books import BOOKS, GameView, outcomes, quotes
from schemas import natural_keys
from schemas.events import AnyEvent, GameStateChanged, MarketReopened, MarketSuspended, PriceQuoted

SOURCE = "svc simulation"
QUARTER = 900  # game seconds
REGULATION = 4 * QUARTER
OVERTIME = 600
# day seconds at which each period starts (Q1..Q4, OT) and day seconds per game second
PERIOD_START = (0, 2520, 5820, 8340, 10920)
PACE = (2400 / QUARTER,) * 4 + (2.5,)
REOPEN_AFTER = timedelta(seconds=45)  # markets come back this long after a score
REPRICE_AFTER = timedelta(seconds=10)
FINAL_AFTER_PLAY = timedelta(seconds=30)  # the final whistle after a game's last play
MARKETS = ("h2h", "spreads", "totals")
SCORE_VALUES = (7, 3, 6, 8, 2)  # TD + PAT, FG, TD (PAT missed), TD + 2, safety


@dataclass(frozen=True)
class Scorer:
    """A real touchdown of this game (from the week's stat lines): who scored, and how."""

    kind: str  # pass, run, special
    player: str
    passer: str | None = None


@dataclass(frozen=True)
class GameSpec:
    source_id: str  # nflverse game ID, such as 2024_01_PIT_ATL
    game_id: str
    kickoff_at: datetime
    home: Team
    away: Team
    home_label: str  # how last_play names the team, such as Falcons
    away_label: str
    home_score: int
    away_score: int
    overtime: bool
    expected_margin: float  # pre-game expected home margin (the closing spread)
    expected_total: float
    touchdowns: dict[str, tuple[Scorer, ...]] = field(default_factory=dict)  # team_id -> its real TDs


def split_score(points: int, rng: random.Random) -> list[int]:
    """Scoring plays adding up to `points`, plausible ones (touchdowns, field goals) likelier."""
    options: list[tuple[list[int], float]] = []
    for safeties in range(3):
        for twos in range(2):
            for misses in range(2):
                rest = points - 2 * safeties - 8 * twos - 6 * misses
                for fgs in range(0, 7):
                    left = rest - 3 * fgs
                    if left < 0 or left % 7:
                        continue
                    weight = (0.04 ** safeties) * (0.2 ** twos) * (0.15 ** misses) * (0.6, 1, 1, 0.7, 0.35, 0.15, 0.05)[fgs]
                    options.append(([7] * (left // 7) + [3] * fgs + [8] * twos + [6] * misses + [2] * safeties, weight))
    if not options:
        raise ValueError(f"no scoring plays add up to {points}")
    plays = rng.choices([o for o, _ in options], weights=[w for _, w in options])[0][:]
    rng.shuffle(plays)
    return plays


@dataclass
class Drive:
    team: Team  # the team with the ball
    ends: int  # game seconds elapsed when it ends
    points: int = 0  # scored on it (a safety: scored by the other team)
    last_of_half: bool = False


def _clock(period: int, elapsed: int) -> str:
    length = OVERTIME if period == 4 else QUARTER
    start = REGULATION if period == 4 else period * QUARTER
    left = max(0, length - (elapsed - start))
    return f"{left // 60:02d}:{left % 60:02d}"


def _period_of(elapsed: int) -> int:
    """The period a moment belongs to; a period's last second is still that period."""
    if elapsed > REGULATION:
        return 4
    return min(3, max(0, (elapsed - 1) // QUARTER))


def _label(period: int) -> str:
    return "OT" if period == 4 else f"Q{period + 1}"


class GameSimulation:
    def __init__(self, spec: GameSpec) -> None:
        self.spec = spec
        self.rng = random.Random(f"{SOURCE}|{spec.source_id}")
        self.events: list[AnyEvent] = []
        self.score = {spec.home.team_id: 0, spec.away.team_id: 0}
        self.seq = 0
        self.last_state_at: datetime | None = None
        self.last_market_at: datetime | None = None
        self.tickets = {tid: list(tds) for tid, tds in spec.touchdowns.items()}
        for tickets in self.tickets.values():
            self.rng.shuffle(tickets)
        self.markets = {m: natural_keys.market_id(spec.game_id, "game", m, "full", None) for m in MARKETS}

    # ---- the plan ----------------------------------------------------------------------

    def run(self) -> list[AnyEvent]:
        s = self.spec
        home, away = s.home, s.away
        margin = s.home_score - s.away_score
        ot_play = abs(margin) if s.overtime and abs(margin) in (2, 3, 6) else None
        overtime = s.overtime and (ot_play is not None or margin == 0)
        winner = None if not ot_play else (home if margin > 0 else away)
        regulation = {
            home.team_id: s.home_score - (ot_play if winner is home else 0),
            away.team_id: s.away_score - (ot_play if winner is away else 0),
        }
        plays = {tid: split_score(points, self.rng) for tid, points in regulation.items()}
        first = self.rng.choice((home, away))
        drives = self._drives(first, plays)
        self._kickoff(0, first)
        boundaries = {QUARTER: 1, 3 * QUARTER: 3}
        for drive in drives:
            for at, quarter in list(boundaries.items()):
                if drive.ends > at:
                    self._state(at, T.END_OF_QUARTER.format(ordinal=T.ORDINALS[quarter]), drive.team)
                    del boundaries[at]
            self._end_drive(drive, ends_game=drive.ends == REGULATION and not overtime)
            if drive.ends == 2 * QUARTER and drive.last_of_half:
                self._state(2 * QUARTER, T.HALFTIME, None, reprice=False)
                self._kickoff(2 * QUARTER, away if first is home else home)
        if overtime:
            tied = self.score[home.team_id]
            self._state(REGULATION, T.END_OF_REGULATION.format(score=f"{tied}-{tied}"), None, reprice=False)
            loser = (away if winner is home else home) if winner else self.rng.choice((home, away))
            self._kickoff(REGULATION, loser, period=4)
            first_end = REGULATION + self.rng.randint(150, 300)
            if winner is not None and ot_play == 2:
                self._end_drive(Drive(loser, first_end, 2), walk_off=True)  # safety on the first OT drive
                end = first_end
            else:
                self._end_drive(Drive(loser, first_end))
                end = min(REGULATION + OVERTIME, first_end + self.rng.randint(150, 280))
                if winner is not None:
                    self._end_drive(Drive(winner, end, ot_play), walk_off=True)
                else:
                    end = REGULATION + OVERTIME
            self._final(end, overtime=True)
        else:
            self._final(REGULATION, overtime=False)
        assert self.score == {home.team_id: s.home_score, away.team_id: s.away_score}, "simulation must end on the real score"
        return self.events

    def _drives(self, first: Team, plays: dict[str, list[int]]) -> list[Drive]:
        """Alternating drives over both halves, with every scoring play on one of them."""
        s = self.spec
        other = {s.home.team_id: s.away, s.away.team_id: s.home}
        scale = 1.0
        while True:
            drives: list[Drive] = []
            for start, team in ((0, first), (2 * QUARTER, other[first.team_id])):
                t = start
                while t < start + 2 * QUARTER:
                    t = min(start + 2 * QUARTER, t + int(self.rng.uniform(75, 330) * scale))
                    drives.append(Drive(team, t))
                    team = other[team.team_id]
                drives[-1].last_of_half = True
            own = {tid: [d for d in drives if d.team.team_id == tid] for tid in plays}
            needs_own = {tid: [p for p in ps if p != 2] for tid, ps in plays.items()}
            needs_opp = {tid: [p for p in ps if p == 2] for tid, ps in plays.items()}
            fits = all(
                len(own[tid]) >= len(needs_own[tid]) + len(needs_opp[other[tid].team_id]) for tid in plays
            )
            if fits:
                break
            scale *= 0.85
        for tid in plays:
            chosen = self.rng.sample(own[tid], len(needs_own[tid]) + len(needs_opp[other[tid].team_id]))
            for drive, points in zip(chosen, needs_own[tid] + needs_opp[other[tid].team_id]):
                drive.points = points
        return drives

    # ---- events ------------------------------------------------------------------------

    def _at(self, elapsed: int, period: int | None = None) -> datetime:
        p = _period_of(elapsed) if period is None else period
        start = REGULATION if p == 4 else p * QUARTER
        return self.spec.kickoff_at + timedelta(seconds=PERIOD_START[p] + (elapsed - start) * PACE[p])

    def _later(self, at: datetime, gap: timedelta = timedelta(seconds=1)) -> datetime:
        """`at`, or `gap` after the previous state change if that is later: each state change
        of a game has a time of its own (readers order them by time), the final comes last."""
        if self.last_state_at is not None and at < self.last_state_at + gap:
            at = self.last_state_at + gap
        self.last_state_at = at
        return at

    def _next_id(self) -> str:
        self.seq += 1
        return f"{self.spec.source_id}#{self.seq}"

    def _name(self, team: Team) -> str:
        return self.spec.home_label if team is self.spec.home else self.spec.away_label

    def _other(self, team: Team) -> Team:
        return self.spec.away if team is self.spec.home else self.spec.home

    def _kickoff(self, elapsed: int, receiving: Team, period: int | None = None) -> None:
        p = _period_of(elapsed + 1) if period is None else period
        text = T.KICKOFF.format(kicking=self._name(self._other(receiving)), receiving=self._name(receiving))
        self._state(elapsed, text, receiving, period=p)

    def _end_drive(self, drive: Drive, walk_off: bool = False, ends_game: bool = False) -> None:
        """The drive's last play; `ends_game`: the final follows (markets stay as they are until
        the final suspends them); `walk_off`: an overtime score that ends the game."""
        team, opp = drive.team, self._other(drive.team)
        yards = self.rng.randint(1, 75) if self.rng.random() < 0.6 else self.rng.randint(1, 12)
        if drive.points == 2:
            self.score[opp.team_id] += 2
            text = T.SAFETY.format(team=self._name(opp), opponent=self._name(team))
        elif drive.points == 3:
            self.score[team.team_id] += 3
            text = T.FIELD_GOAL.format(team=self._name(team), yards=self.rng.randint(22, 56))
        elif drive.points:
            self.score[team.team_id] += drive.points
            text = self._touchdown(team, yards) + (T.OT_TD if walk_off else T.AFTER_TD[drive.points])
        elif drive.last_of_half:
            return  # the half runs out on this drive: the halftime or final state says so
        else:
            template = self.rng.choices([t for t, _ in T.STOPS], weights=[w for _, w in T.STOPS])[0]
            text = template.format(team=self._name(team), opponent=self._name(opp), yards=self.rng.randint(38, 57))
        if walk_off or ends_game:
            self._state(drive.ends, text, None, reprice=False)
            return
        # after a score the other side receives; after a stop the other side has the ball
        self._state(drive.ends, text, opp, scored=bool(drive.points))

    def _touchdown(self, team: Team, yards: int) -> str:
        tickets = self.tickets.get(team.team_id)
        name = self._name(team)
        if not tickets:
            return T.TD_GENERIC.format(team=name, yards=yards)
        ticket = tickets.pop()
        if ticket.kind == "pass":
            return T.TD_PASS.format(team=name, receiver=ticket.player, yards=yards, passer=ticket.passer or "the quarterback")
        if ticket.kind == "run":
            return T.TD_RUN.format(team=name, runner=ticket.player, yards=yards)
        return T.TD_SPECIAL.format(team=name, player=ticket.player)

    def _state(
        self, elapsed: int, last_play: str, possession: Team | None, *, period: int | None = None,
        scored: bool = False, reprice: bool = True,
    ) -> None:
        s = self.spec
        p = _period_of(elapsed) if period is None else period
        at = self._later(self._at(elapsed, p))
        self.events.append(GameStateChanged(
            source=SOURCE, source_id=self._next_id(), source_ts=at, ingest_ts=at, game_id=s.game_id, status="live",
            score_home=self.score[s.home.team_id], score_away=self.score[s.away.team_id], period=_label(p),
            clock=_clock(p, elapsed), possession=possession.team_id if possession else None, last_play=last_play,
        ))
        left = max(0.0, (REGULATION - elapsed) / REGULATION) if p < 4 else 0.03
        if scored:
            self._suspend(at, "score")
            self._reopen(at + REOPEN_AFTER)
            self._quote(at + REOPEN_AFTER, left)
        elif reprice:
            self._quote(at + REPRICE_AFTER, left)

    def _final(self, elapsed: int, overtime: bool) -> None:
        s = self.spec
        p = 4 if overtime else 3
        at = self._at(elapsed, p)
        if self.last_market_at is not None:  # a reopening or a re-price still due comes first
            at = max(at, self.last_market_at + timedelta(seconds=1))
        at = self._later(at, FINAL_AFTER_PLAY)
        names = {"away": s.away.name, "home": s.home.name}
        text = (T.FINAL_OT if overtime else T.FINAL).format(
            away=names["away"], away_score=s.away_score, home=names["home"], home_score=s.home_score,
        )
        self.events.append(GameStateChanged(
            source=SOURCE, source_id=self._next_id(), source_ts=at, ingest_ts=at, game_id=s.game_id, status="final",
            score_home=s.home_score, score_away=s.away_score, period=_label(p), clock=_clock(p, elapsed),
            possession=None, last_play=text,
        ))
        self._suspend(at, "final")
        self.final_at = at

    def _suspend(self, at: datetime, reason: str) -> None:
        for market_id in self.markets.values():
            self.events.append(MarketSuspended(
                source=SOURCE, source_id=self._next_id(), source_ts=at, ingest_ts=at, game_id=self.spec.game_id,
                market_id=market_id, reason=reason,
            ))

    def _reopen(self, at: datetime) -> None:
        self.last_market_at = at
        for market_id in self.markets.values():
            self.events.append(MarketReopened(
                source=SOURCE, source_id=self._next_id(), source_ts=at, ingest_ts=at, game_id=self.spec.game_id,
                market_id=market_id,
            ))

    def _quote(self, at: datetime, left: float) -> None:
        self.last_market_at = at
        s = self.spec
        view = GameView(
            margin=self.score[s.home.team_id] - self.score[s.away.team_id],
            points=self.score[s.home.team_id] + self.score[s.away.team_id], left=left,
            expected_margin=s.expected_margin, expected_total=s.expected_total,
        )
        self.events.extend(quote_books(s, self.markets, view, at, self.rng, self._next_id))


def quote_books(spec: GameSpec, markets: dict[str, str], view: GameView, at: datetime, rng: random.Random, next_id) -> list[PriceQuoted]:
    """Every simulated book's prices for the game's three markets at one moment."""
    names = {"home": spec.home.name, "away": spec.away.name, "over": "Over", "under": "Under"}
    participants = {"home": spec.home.team_id, "away": spec.away.team_id}
    out = []
    for book in BOOKS:
        for market, (point, prices) in quotes(view, book, rng).items():
            out.append(PriceQuoted(
                source=SOURCE, source_id=next_id(), source_ts=at, ingest_ts=at, game_id=spec.game_id,
                market_id=markets[market], book=book.key, book_name=book.name, kind="game", market_type=market,
                point=point, outcomes=outcomes(prices, book, names, participants),
            ))
    return out


def simulate(spec: GameSpec) -> tuple[list[AnyEvent], datetime]:
    """The game's in-game events (unstamped, in time order) and when it ended."""
    sim = GameSimulation(spec)
    events = sim.run()
    return sorted(events, key=lambda e: e.source_ts), sim.final_at
