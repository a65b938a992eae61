"""Typed resources as the API returns them (msgspec Structs).

Unknown members are ignored and most members default, so a server that adds fields (open
enumerations and additive changes) never breaks a client that predates them.
"""

from __future__ import annotations

from datetime import date as Date, datetime
from typing import Any, Generic, TypeVar

import msgspec

T = TypeVar("T")


class Model(msgspec.Struct, kw_only=True, omit_defaults=True):
    def to_dict(self) -> dict[str, Any]:
        return msgspec.to_builtins(self)


class KnownBy(Model, kw_only=True):
    source: str
    source_id: str


class Provenance(Model, kw_only=True):
    source: str | None = None
    source_ts: datetime | None = None
    ingest_ts: datetime | None = None
    known_by: list[KnownBy] = []


class Meta(Model, kw_only=True):
    """Members common to most resources."""

    as_of: datetime | None = None
    source: str | None = None
    stale_after_ms: int | None = None
    attribution: str | None = None
    request_id: str | None = None
    live_topics: list[str] = []
    rg_line: str | None = None


class TeamRef(Model, kw_only=True):
    id: str
    name: str
    abbreviation: str | None = None
    competition: str | None = None
    provenance: Provenance | None = None


class Score(Model, kw_only=True):
    home: int | None = None
    away: int | None = None


class MarketRef(Model, kw_only=True):
    id: str
    kind: str
    type: str
    period: str
    participant_id: str | None = None
    name: str | None = None
    provenance: Provenance | None = None


class StatLine(Model, kw_only=True):
    subject_id: str
    game_id: str | None = None
    season: str | None = None
    season_type: str | None = None
    basis: str | None = None
    stats: dict[str, Any] = {}
    provenance: Provenance | None = None


class Game(Meta, kw_only=True):
    object: str = "game"
    id: str
    name: str
    competition: str | None = None
    sport: str | None = None
    season: str | None = None
    week: int | None = None
    season_type: str | None = None
    kickoff_at: datetime | None = None
    kickoff_date: Date | None = None
    venue: str | None = None
    status: str = "scheduled"
    score: Score | None = None
    period: str | None = None
    clock: str | None = None
    possession: str | None = None
    last_play: str | None = None
    state_provenance: Provenance | None = None
    home_team: TeamRef | None = None
    away_team: TeamRef | None = None
    provenance: Provenance | None = None


class SlateGame(Game, kw_only=True):
    markets: list[MarketRef] = []


class GameDetail(SlateGame, kw_only=True):
    player_stats: list[StatLine] = []
    team_stats: list[StatLine] = []


class GameSummary(Model, kw_only=True):
    id: str
    name: str
    competition: str | None = None
    kickoff_at: datetime | None = None
    status: str | None = None


class Price(Model, kw_only=True):
    decimal: float
    american: float
    decimal_display: str | None = None
    american_display: str | None = None


class OutcomeQuote(Model, kw_only=True):
    selection: str
    name: str
    participant_id: str | None = None
    point: float | None = None
    consensus_price: Price | None = None
    no_vig_probability: float | None = None
    no_vig_probability_display: str | None = None
    fair_price: Price | None = None


class MarketLine(Model, kw_only=True):
    point: float | None = None
    is_main: bool = False
    basis: str | None = None
    source: str | None = None
    books: int = 0
    hold: float | None = None
    hold_display: str | None = None
    overround: float | None = None
    overround_display: str | None = None
    devig_notes: dict[str, Any] | None = None
    as_of: datetime | None = None
    outcomes: list[OutcomeQuote] = []


class Devig(Model, kw_only=True):
    method: str
    card: str | None = None
    methods: list[str] = []


class Market(Meta, kw_only=True):
    object: str = "market"
    id: str
    game_id: str
    kind: str
    type: str
    period: str
    participant_id: str | None = None
    name: str | None = None
    status: str = "open"
    status_reason: str | None = None  # the newest suspension's reason, while suspended
    main_point: float | None = None
    books: int = 0
    provenance: Provenance | None = None


class MarketDetail(Market, kw_only=True):
    game: GameSummary | None = None
    devig: Devig | None = None
    main_line: MarketLine | None = None
    alternate_lines: list[MarketLine] = []


class Player(Meta, kw_only=True):
    object: str = "player"
    id: str
    name: str
    sport: str | None = None
    position: str | None = None
    team: TeamRef | None = None
    availability: list[dict[str, Any]] = []
    injury: dict[str, Any] | None = None
    news: list[dict[str, Any]] = []
    season_lines: list[StatLine] = []
    game_lines: list[StatLine] = []
    provenance: Provenance | None = None


class CompetitionRef(Model, kw_only=True):
    id: str
    slug: str
    name: str


class Sport(Meta, kw_only=True):
    object: str = "sport"
    id: str
    slug: str
    name: str
    competitions: list[CompetitionRef] = []


class Season(Model, kw_only=True):
    id: str
    label: str
    year: int | None = None
    starts_on: Date | None = None
    ends_on: Date | None = None


class Competition(Meta, kw_only=True):
    object: str = "competition"
    id: str
    slug: str
    name: str
    sport: str | None = None
    seasons: list[Season] = []


class SearchResult(Model, kw_only=True):
    object: str = "search_result"
    id: str
    kind: str
    name: str
    context: dict[str, Any] = {}


class ReferenceEntry(Meta, kw_only=True):
    object: str = "reference_entry"
    id: str
    slug: str
    kind: str
    title: str
    aliases: list[str] = []
    summary: str = ""
    body: str = ""
    jurisdictions: list[str] = []
    products: list[str] = []
    operators: list[str] = []
    sources: list[dict[str, Any]] = []
    reviewed_at: Date | None = None
    review_due: Date | None = None
    stale: bool = False
    version: int = 0
    related: list[str] = []
    formulas: list[str] = []


class Calculation(Model, kw_only=True):
    """Any calculation's answer: `result` holds the calculation's own members."""

    object: str = "calculation"
    name: str | None = None
    formula: str | None = None
    formulas: list[str] = []
    source: str | None = None
    as_of: datetime | None = None
    rg_line: str | None = None
    inputs: dict[str, Any] = {}
    result: dict[str, Any] = {}


class Formula(Model, kw_only=True):
    object: str = "formula"
    id: str
    version: int = 0
    ref: str | None = None
    name: str = ""
    calculation: str | None = None
    formula: str = ""
    expression: str = ""
    inputs: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []
    sources: list[str] = []
    rg_line: str | None = None


class Strategy(Meta, kw_only=True):
    object: str = "strategy"
    id: str
    name: str
    family: str | None = None
    verdict: str | None = None
    route: str | None = None
    version: int = 0


class Health(Model, kw_only=True):
    object: str = "health"
    ok: bool
    service: str | None = None
    version: str | None = None
    db: bool | None = None
    redis: bool | None = None
    migrated: bool | None = None


class Status(Model, kw_only=True):
    object: str = "status"
    ok: bool
    api_version: str | None = None
    credential: str | None = None
    mode: str | None = None
    plan: str | None = None
    account_id: str | None = None
    scopes: list[str] = []
    rate: dict[str, Any] | None = None
    credits: dict[str, Any] | None = None


class WireTicket(Model, kw_only=True):
    object: str = "wire_ticket"
    ticket: str
    expires_at: datetime
    topics: list[str] | None = None
    transport: str = "ws"
    mode: str = "live"
    url: str


class Problem(Model, kw_only=True):
    """A problem object (RFC 9457) as the API sends it."""

    type: str | None = None
    title: str | None = None
    status: int = 0
    code: str = "unknown"
    detail: str | None = None
    param: str | None = None
    doc_url: str | None = None
    request_id: str | None = None
    retryable: bool = False
    display_message: str | None = None


class ListEnvelope(Model, Generic[T], kw_only=True):
    object: str = "list"
    data: list[T] = []
    has_more: bool = False
    next_cursor: str | None = None


class Slate(Meta, kw_only=True):
    object: str = "slate"
    date: Date | None = None
    timezone: str | None = None
    starts_at: datetime | None = None
    ends_at: datetime | None = None
    game_count: int = 0
    data: list[SlateGame] = []
    has_more: bool = False
    next_cursor: str | None = None
