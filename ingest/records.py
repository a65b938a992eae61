"""What an adapter hands the pipeline: parsed records, rejected records, and identity claims.

An adapter is pure: it reads a file into `Record`s and `Rejected`s. A record's events may
depend on which `gm_` its game resolves to (the registry knows games other sources created),
so a record carries its claims and a `build` function that turns a `Resolution` into events.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from typing import Protocol

from schemas.events import AnyEvent


@dataclass(frozen=True, slots=True)
class GameClaim:
    """A source says this game exists: resolve it to the `gm_` of the same real game."""

    source: str
    source_id: str
    competition: str
    home_team_id: str
    away_team_id: str
    kickoff_at: datetime | None
    kickoff_date: date | None
    season: str | None = None
    week: int | None = None
    # match a known game of another source by teams and kickoff window (else: own ID or natural)
    match_window: bool = True


@dataclass(frozen=True, slots=True)
class WeekGame:
    """The game `team_id` played in this season and week (how player stats name their game)."""

    competition: str
    season: str
    week: int
    team_id: str


@dataclass(frozen=True, slots=True)
class ResolvedGame:
    game_id: str
    # claims: the kickoff this source last gave (its own, when new); week lookups: the game's
    # kickoff, or the start of its local day when it has no time
    kickoff_at: datetime | None
    kickoff_date: date | None = None
    # claims only: this source had already named this game (so a kickoff change is a reschedule)
    seen_before: bool = False


@dataclass(frozen=True, slots=True)
class Identity:
    """A source's own ID for a team or player, recorded in the registry."""

    kind: str  # team, player
    source: str
    source_id: str
    entity_id: str


class Resolution(Protocol):
    def game(self, claim: GameClaim) -> ResolvedGame: ...

    def week_game(self, query: WeekGame) -> ResolvedGame | None: ...


@dataclass(slots=True)
class Rejected:
    """A record (or one part of it) that cannot become events: it goes to the dead letters."""

    index: int  # the source record it belongs to
    location: str  # "line 12", "$[3].bookmakers[2].markets[0]"
    raw: str
    reason: str


Build = Callable[[Resolution], "list[AnyEvent] | Rejected"]


@dataclass(slots=True)
class Record:
    index: int
    location: str
    raw: str
    build: Build
    claims: tuple[GameClaim, ...] = ()
    week_games: tuple[WeekGame, ...] = ()
    identities: tuple[Identity, ...] = ()
    # the adapter put every price and point of this record's quotes (PriceQuoted: its point and
    # its outcomes' prices and points) through the bounds' own price_ok and point_ok as it read
    # them, dead-lettering a bad one at the market's path: the bounds check does not repeat them
    quotes_checked: bool = False


Item = Record | Rejected


@dataclass(slots=True)
class Parsed:
    """A source file read by an adapter: how many records it holds and their items, in order."""

    source: str  # adapter name, such as nflverse-games
    file: str
    total: int
    items: Iterator[Item]


class FormatError(ValueError):
    """The file is not of the format the adapter reads (wrong header, not JSON, ...)."""


# What reading one hostile record can raise (a bad value, a date past the calendar's end, a
# decimal that cannot be compared, a byte that is not UTF-8, a key it lacks): the record is
# dead-lettered with the reason and the file goes on. (msgspec's errors are ValueErrors.)
RECORD_ERRORS: tuple[type[Exception], ...] = (ValueError, ArithmeticError, LookupError, TypeError)


def reason_of(exc: Exception) -> str:
    """A dead letter's reason: our own checks say what is wrong; anything else also says what
    kind of error it was."""
    text = str(exc) or type(exc).__name__
    if type(exc).__module__.startswith(("ingest", "schemas", "domain")):
        return text
    return f"{type(exc).__name__}: {text}"
