"""Resolving a batch of claims to IDs; the in-memory resolver has the registry's exact rules.

Rules, in order, for a game claim:
1. this source named this game before (same source and source ID): the same `gm_`;
2. else a known game of the same competition and teams kicks off within `MATCH_WINDOW`
   (closest first): that `gm_`;
3. else the natural ID (competition, teams, local kickoff day).
The Postgres registry (ingest/registry.py) applies these rules per dataset, persistently;
this module applies them in memory (the sandbox day, unit tests).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime

from ingest.identity import MATCH_WINDOW, kickoff_sort, natural_game_id
from ingest.records import GameClaim, Identity, Record, ResolvedGame, WeekGame


@dataclass(slots=True)
class BatchResolution:
    games: dict[GameClaim, ResolvedGame] = field(default_factory=dict)
    weeks: dict[WeekGame, ResolvedGame | None] = field(default_factory=dict)

    def game(self, claim: GameClaim) -> ResolvedGame:
        return self.games[claim]

    def week_game(self, query: WeekGame) -> ResolvedGame | None:
        return self.weeks[query]


@dataclass(slots=True)
class IndexedGame:
    game_id: str
    competition: str
    home_team_id: str
    away_team_id: str
    kickoff_sort: datetime
    kickoff_at: datetime | None
    season: str | None
    week: int | None
    owner: str  # the source that first named it: only it may move the kickoff


def claims_of(records: Iterable[Record]) -> tuple[list[GameClaim], list[WeekGame], list[Identity]]:
    """Distinct claims, week lookups and identities of a batch, in first-seen order."""
    claims: dict[GameClaim, None] = {}
    weeks: dict[WeekGame, None] = {}
    identities: dict[Identity, None] = {}
    for r in records:
        for c in r.claims:
            claims[c] = None
        for w in r.week_games:
            weeks[w] = None
        for i in r.identities:
            identities[i] = None
    return list(claims), list(weeks), list(identities)


class MemoryResolver:
    """The registry's rules over dictionaries: the sandbox day and tests use it as it is; the
    Postgres registry loads the rows a batch needs into one and writes back what changed."""

    def __init__(self) -> None:
        self.registry: dict[tuple[str, str], tuple[str, datetime | None, date | None]] = {}
        self.index: dict[str, IndexedGame] = {}
        self.by_teams: dict[tuple[str, str, str], set[str]] = {}
        self.by_week: dict[tuple[str, str, int, str], set[str]] = {}
        self.identities: set[Identity] = set()
        self.touched: dict[str, None] = {}  # games whose index row changed (ordered set)

    def add(self, row: IndexedGame) -> None:
        self.index[row.game_id] = row
        self.by_teams.setdefault((row.competition, row.home_team_id, row.away_team_id), set()).add(row.game_id)
        self._index_week(row)

    def _index_week(self, row: IndexedGame) -> None:
        if row.season is not None and row.week is not None:
            for team_id in (row.home_team_id, row.away_team_id):
                self.by_week.setdefault((row.competition, row.season, row.week, team_id), set()).add(row.game_id)

    def resolve_now(self, records: list[Record]) -> BatchResolution:
        claims, weeks, identities = claims_of(records)
        out = BatchResolution()
        for claim in claims:
            out.games[claim] = self.claim(claim)
        for query in weeks:
            out.weeks[query] = self.week(query)
        self.identities.update(identities)
        return out

    async def resolve(self, records: list[Record]) -> BatchResolution:
        return self.resolve_now(records)

    def claim(self, c: GameClaim) -> ResolvedGame:
        key = (c.source, c.source_id)
        sort = kickoff_sort(c.competition, c.kickoff_at, c.kickoff_date)
        known = self.registry.get(key)
        if known is not None:
            game_id = known[0]
            resolved = ResolvedGame(game_id, known[1], known[2], seen_before=True)
        else:
            game_id = self._match(c, sort) if c.match_window else None
            game_id = game_id or natural_game_id(c.competition, c.home_team_id, c.away_team_id, c.kickoff_at, c.kickoff_date)
            resolved = ResolvedGame(game_id, c.kickoff_at, c.kickoff_date, seen_before=False)
        self.registry[key] = (game_id, c.kickoff_at, c.kickoff_date)
        row = self.index.get(game_id)
        if row is None:
            self.add(IndexedGame(
                game_id, c.competition, c.home_team_id, c.away_team_id, sort, c.kickoff_at, c.season, c.week, c.source,
            ))
        else:
            if row.owner == c.source:
                row.kickoff_sort, row.kickoff_at = sort, c.kickoff_at
            row.season = c.season or row.season
            row.week = c.week if c.week is not None else row.week
            self._index_week(row)
        self.touched[game_id] = None
        return resolved

    def _match(self, c: GameClaim, sort: datetime) -> str | None:
        best: tuple[float, str] | None = None
        for game_id in self.by_teams.get((c.competition, c.home_team_id, c.away_team_id), ()):
            gap = abs((self.index[game_id].kickoff_sort - sort).total_seconds())
            if gap <= MATCH_WINDOW.total_seconds() and (best is None or (gap, game_id) < best):
                best = (gap, game_id)
        return best[1] if best else None

    def week(self, q: WeekGame) -> ResolvedGame | None:
        ids = self.by_week.get((q.competition, q.season, q.week, q.team_id), ())
        found = sorted(
            (g for g in (self.index[i] for i in ids)
             if g.season == q.season and g.week == q.week and q.team_id in (g.home_team_id, g.away_team_id)),
            key=lambda g: (g.kickoff_sort, g.game_id),
        )
        return ResolvedGame(found[0].game_id, found[0].kickoff_sort) if found else None
