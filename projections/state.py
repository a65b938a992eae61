"""The projector's working state: one immutable value per log key (game, player, team, library entry).

Reducers never mutate a state; they return a new one that shares every unchanged part with
the old. That makes change detection an identity test (`old.part is new.part`), which is how the
batch core finds the rows to write. Times are epoch microseconds (see `event_time`).
State depends only on events of its own key, so a live run and a rebuild agree exactly.
Structs are `gc=False`: immutable trees never form cycles, and leaving the projector's large
working set out of the cyclic garbage collector keeps collections short (no latency spikes).
A market's lines, their quotes and consensus are plain classes (`projections.lines`), which the
collector does track; the live projector freezes each batch's survivors (`runner`), so they are
not scanned again.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Generic, TypeVar

import msgspec

from projections.event_time import Stamp
from projections.lines import BookQuote, LineState
from schemas.library import LibraryEntry
from schemas.read_models import MarketStatus
from schemas.strategies import RecipeEntry, StrategyEntry

KnownBy = tuple[tuple[str, str], ...]  # sorted (source, source_id) pairs
Fields = dict[str, tuple[Any, Stamp]]  # field -> (value, stamp of the newest event that set it)


class Origin(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """Provenance of one input event."""

    source: str
    source_ts: int
    ingest_ts: int
    event_id: str

    @property
    def stamp(self) -> Stamp:
        return (self.source_ts, self.event_id)


# ---- games and markets (key: game_id) -----------------------------------------------------


class Play(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """A game's state as of its newest GameStateChanged."""

    status: str
    score_home: int | None
    score_away: int | None
    period: str | None
    clock: str | None
    possession: str | None
    last_play: str | None
    origin: Origin


class QuotedOutcome(msgspec.Struct, frozen=True, array_like=True, gc=False):
    selection: str
    name: str
    participant_id: str | None
    price: Decimal
    price_format: str
    point: Decimal | None


class StoredQuote(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """A `lines.BookQuote` as the cache stores it (`BookQuote.stored()`): the same array."""

    book: str
    book_name: str | None
    kind: str
    origin: Origin
    outcomes: tuple[QuotedOutcome, ...]
    odds: tuple[float, ...] | None
    selections: tuple[str, ...]
    probabilities: tuple[float, ...] | None
    ts: int

    def quote(self) -> BookQuote:
        return BookQuote(self.book, self.book_name, self.kind, self.origin, self.outcomes, self.odds,
                         self.selections, self.probabilities, self.ts)


class ConsensusOutcome(msgspec.Struct, frozen=True, array_like=True, gc=False):
    selection: str
    name: str
    participant_id: str | None
    point: Decimal | None
    price: float  # median decimal price across eligible books
    probability: float  # median no-vig probability (default method), renormalised


class Suspension(msgspec.Struct, frozen=True, array_like=True, gc=False):
    stamp: Stamp
    suspended: bool
    reason: str | None


class MarketState(msgspec.Struct, frozen=True, array_like=True, gc=False):
    market_id: str
    game_id: str
    kind: str  # a MarketKind once a quote names the market; "" before
    type: str
    period: str
    participant_id: str | None
    origin: Origin | None  # the first quote (least stamp), the origin of its identity; None before one
    as_of: int = 0
    name: tuple[str, Stamp] | None = None
    suspend_all: Suspension | None = None  # newest market-wide suspend/reopen
    suspend_book: dict[str, Suspension] = {}  # newest per-book suspend/reopen
    lines: dict[str, LineState] = {}
    # derived from the lines
    main_key: str | None = None
    status: MarketStatus = "open"
    reason: str | None = None
    seq: int = 0  # last seq handed out on `market:<market_id>`


class GameState(msgspec.Struct, frozen=True, array_like=True, gc=False):
    game_id: str
    fields: Fields = {}
    origin: Origin | None = None  # the least-stamped GameScheduled: the game's identity
    known_by: KnownBy = ()
    play: Play | None = None
    as_of: int = 0
    seq: int = 0  # last seq handed out on `game:<game_id>`
    markets: dict[str, MarketState] = {}

    @property
    def scheduled(self) -> bool:
        return self.origin is not None


# ---- players (key: player_id) -------------------------------------------------------------


class InjuryReport(msgspec.Struct, frozen=True, array_like=True, gc=False):
    order: tuple[int, int, int, str]  # (season, week, source_ts, event_id): newest wins
    team_id: str | None
    status: str | None
    roster_status: str | None
    detail: str | None
    secondary_detail: str | None
    practice: str | None
    game_day: str | None
    season: int
    week: int | None
    game_id: str | None
    reported_at: int | None
    origin: Origin


class Availability(msgspec.Struct, frozen=True, array_like=True, gc=False):
    order: tuple[int, int, int, str]
    status: str
    game_id: str | None
    season: int
    week: int | None
    origin: Origin


class NewsItem(msgspec.Struct, frozen=True, array_like=True, gc=False):
    order: tuple[int, str]  # (published_at or source_ts, event_id): newest first
    kind: str
    headline: str
    published_at: int | None
    origin: Origin


class GameLine(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """A player's stats in one game from one source (the newest version of it)."""

    team_id: str | None
    game_id: str | None
    season: str
    week: int | None
    season_type: str | None
    stats: dict[str, int | Decimal]
    origin: Origin


class PlayerState(msgspec.Struct, frozen=True, array_like=True, gc=False):
    player_id: str
    fields: Fields = {}
    origin: Origin | None = None  # the least-stamped PlayerRegistered
    known_by: KnownBy = ()
    as_of: int = 0
    injury: InjuryReport | None = None
    availability: dict[str, Availability] = {}  # per source
    news: tuple[NewsItem, ...] = ()  # newest first, at most NEWS_KEPT
    lines: dict[str, GameLine] = {}  # per (source, season, season_type, week, game)

    @property
    def registered(self) -> bool:
        return self.origin is not None


# ---- teams (key: team_id) -----------------------------------------------------------------


class TeamState(msgspec.Struct, frozen=True, array_like=True, gc=False):
    team_id: str
    fields: Fields = {}
    aliases: tuple[str, ...] = ()
    origin: Origin | None = None
    known_by: KnownBy = ()
    as_of: int = 0


# ---- content: library entries, strategies, recipes (key: entry_id) ----------------------------

E = TypeVar("E")


class ContentRevision(msgspec.Struct, Generic[E], frozen=True, array_like=True, gc=False):
    """One event of an entry's history, as the projection applied it."""

    revision: int  # 1, 2, ... in log order
    action: str  # published, revised, retired
    version: int  # the entry's version after this revision
    entry: E | None  # the text it published (None: retired)
    reason: str | None  # why it was retired
    origin: Origin


class ContentState(msgspec.Struct, Generic[E], frozen=True, array_like=True, gc=False):
    entry_id: str
    entry: E | None = None  # the newest published text (kept when retired)
    status: str = "retired"  # published or retired
    version: int = 0  # moves when what the entry says changes (its kind's version hash)
    content: str = ""  # that hash of `entry`
    origin: Origin | None = None  # the first publication
    as_of: int = 0
    history: tuple[ContentRevision[E], ...] = ()


class LibraryState(ContentState[LibraryEntry], frozen=True, array_like=True, gc=False):
    """A reference library entry (version: schemas.library.content_hash)."""


class StrategyState(ContentState[StrategyEntry], frozen=True, array_like=True, gc=False):
    """A strategy (version: schemas.strategies.version_hash, the verdict and its evidence)."""


class RecipeState(ContentState[RecipeEntry], frozen=True, array_like=True, gc=False):
    """A recipe (version: schemas.strategies.recipe_version_hash)."""


KeyState = GameState | PlayerState | TeamState | LibraryState | StrategyState | RecipeState
