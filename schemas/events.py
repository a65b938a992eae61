"""Canonical events: what every source feed is turned into before it reaches the log.

A tagged union of msgspec Structs (tag field `type`), each carrying its schema version `v`.
Every event is stamped with provenance: `source` (who produced it, as shown to readers),
`source_id` (the source's own ID for the record), `source_ts` (when the source says it was
true), `ingest_ts` (when we read it) and `event_id`, a hash of source, source ID and content,
so the same record ingested twice has the same `event_id`.

Prices, points and stats are `Decimal`, encoded as strings: their exact digits survive the log.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import date, datetime, timezone
from decimal import Decimal
from typing import ClassVar, Literal, Union, get_args

import msgspec

from schemas.datasets import FEED_GAMES, FEED_PLAYERS, FEED_REFERENCE, FEED_TEAMS, FEED_TOPICS
from domain.ids import PREFIXES, _encode
from domain.prices import QuoteFormat
from schemas.library import LibraryEntry
from schemas.strategies import RecipeEntry, StrategyEntry

GameStatus = Literal["scheduled", "live", "final", "postponed", "cancelled", "suspended"]
MarketKind = Literal["game", "prop", "future", "exchange"]
SeasonType = Literal["regular", "postseason", "preseason"]
NewsKind = Literal["injury", "transaction", "news"]
GameDay = Literal["active", "inactive", "out"]
StatValue = Union[int, Decimal]


class KnownBy(msgspec.Struct, frozen=True):
    """One source's own ID for an entity (`provenance.known_by`)."""

    source: str
    source_id: str


class Event(msgspec.Struct, kw_only=True, frozen=True, tag_field="type"):
    """Provenance every event carries; subclasses add the payload.

    Each event type also declares where the log keeps it (class attributes, not fields: they
    are not encoded): `feed`, its feed topic, and `key_field`, the field naming the entity
    whose order the log must keep (the Kafka record key). The four kinds below declare them
    for their types; at import every type `AnyEvent` names is checked to declare both."""

    feed: ClassVar[str]
    key_field: ClassVar[str]

    v: int = 1
    event_id: str = ""
    source: str
    source_id: str
    source_ts: datetime
    ingest_ts: datetime


class TeamEvent(Event, kw_only=True, frozen=True):
    feed: ClassVar[str] = FEED_TEAMS
    key_field: ClassVar[str] = "team_id"


class GameEvent(Event, kw_only=True, frozen=True):
    feed: ClassVar[str] = FEED_GAMES
    key_field: ClassVar[str] = "game_id"


class PlayerEvent(Event, kw_only=True, frozen=True):
    feed: ClassVar[str] = FEED_PLAYERS
    key_field: ClassVar[str] = "player_id"


class ReferenceEvent(Event, kw_only=True, frozen=True):
    feed: ClassVar[str] = FEED_REFERENCE
    key_field: ClassVar[str] = "entry_id"


# ---- teams (key: team_id, topic feed.teams) -------------------------------------------------


class TeamRegistered(TeamEvent, kw_only=True, frozen=True, tag="team.registered"):
    team_id: str
    sport: str
    competition: str
    name: str
    abbreviation: str | None = None
    # every other name the team has gone by in our sources (renames, relocations)
    aliases: list[str] = []
    known_by: list[KnownBy] = []


# ---- games and markets (key: game_id, topic feed.games) -------------------------------------


class GameScheduled(GameEvent, kw_only=True, frozen=True, tag="game.scheduled"):
    game_id: str
    sport: str
    competition: str
    season: str | None = None  # label, such as "2024" or "2024-25"
    week: int | None = None
    season_type: str | None = None  # as the source names it (REG, POST, ...)
    name: str
    home_team_id: str
    away_team_id: str
    kickoff_at: datetime | None = None
    kickoff_date: date | None = None  # only when the source gives no time
    venue: str | None = None
    neutral_site: bool = False
    known_by: list[KnownBy] = []


class GameRescheduled(GameEvent, kw_only=True, frozen=True, tag="game.rescheduled"):
    game_id: str
    kickoff_at: datetime | None = None
    kickoff_date: date | None = None
    venue: str | None = None


class GameStateChanged(GameEvent, kw_only=True, frozen=True, tag="game.state_changed"):
    game_id: str
    status: GameStatus
    score_home: int | None = None
    score_away: int | None = None
    period: str | None = None
    clock: str | None = None
    possession: str | None = None  # tm_ ID
    last_play: str | None = None


class Outcome(msgspec.Struct, frozen=True, kw_only=True):
    selection: str  # home, away, draw, over, under, yes, no
    name: str
    participant_id: str | None = None
    price: Decimal
    price_format: QuoteFormat
    point: Decimal | None = None


class PriceQuoted(GameEvent, kw_only=True, frozen=True, tag="price.quoted"):
    """One book's prices for every outcome of one market line."""

    game_id: str
    market_id: str
    book: str  # the source's book key, such as draftkings
    book_name: str | None = None
    kind: MarketKind
    market_type: str  # h2h, spreads, totals, or a prop type
    period: str = "full"
    participant_id: str | None = None
    # the line: the total for totals, the home side's handicap for spreads, None for h2h
    point: Decimal | None = None
    market_name: str | None = None
    outcomes: list[Outcome]


class MarketSuspended(GameEvent, kw_only=True, frozen=True, tag="market.suspended"):
    game_id: str
    market_id: str
    book: str | None = None  # None: every book
    reason: str | None = None


class MarketReopened(GameEvent, kw_only=True, frozen=True, tag="market.reopened"):
    game_id: str
    market_id: str
    book: str | None = None


# ---- players (key: player_id, topic feed.players) -------------------------------------------


class PlayerRegistered(PlayerEvent, kw_only=True, frozen=True, tag="player.registered"):
    player_id: str
    sport: str
    competition: str
    name: str
    position: str | None = None
    team_id: str | None = None
    known_by: list[KnownBy] = []


class PlayerUpdated(PlayerEvent, kw_only=True, frozen=True, tag="player.updated"):
    player_id: str
    name: str | None = None
    position: str | None = None
    team_id: str | None = None


class InjuryReported(PlayerEvent, kw_only=True, frozen=True, tag="injury.reported"):
    player_id: str
    team_id: str | None = None
    season: int
    week: int | None = None
    game_type: str | None = None
    game_id: str | None = None
    status: str | None = None  # designation in words: Questionable, Doubtful, Out, Note
    roster_status: str | None = None
    detail: str | None = None  # primary injury
    secondary_detail: str | None = None
    practice: str | None = None  # practice participation in words
    game_day: GameDay | None = None
    reported_at: datetime | None = None


class NewsPublished(PlayerEvent, kw_only=True, frozen=True, tag="news.published"):
    player_id: str
    kind: NewsKind
    headline: str  # one line, at most 200 characters
    published_at: datetime | None = None


class StatLineRecorded(PlayerEvent, kw_only=True, frozen=True, tag="stat_line.recorded"):
    """A player's stats for one game; season lines are derived from these."""

    player_id: str
    team_id: str | None = None
    game_id: str | None = None
    season: str
    week: int | None = None
    season_type: SeasonType | None = None
    stats: dict[str, StatValue]


# ---- the reference library (key: entry_id, topic feed.reference) -----------------------------


class ReferencePublished(ReferenceEvent, kw_only=True, frozen=True, tag="reference.published"):
    """An entry enters the library (or comes back after it was retired)."""

    entry_id: str  # ref_
    # this entry's events on the log, this one included: two events with the same content
    # (a file changed and changed back) are still two events
    revision: int
    path: str  # the file, relative to the library root
    entry: LibraryEntry


class ReferenceRevised(ReferenceEvent, kw_only=True, frozen=True, tag="reference.revised"):
    """A published entry's file changed (text, sources, metadata or review dates)."""

    entry_id: str
    revision: int
    path: str
    entry: LibraryEntry


class ReferenceRetired(ReferenceEvent, kw_only=True, frozen=True, tag="reference.retired"):
    """An entry leaves the library: its file was removed, or says `status = "retired"`."""

    entry_id: str
    revision: int
    slug: str
    reason: str


# ---- the strategy registry (key: stg_ ID or chain ID, topic feed.reference) ------------------
# The same three steps as a library entry: the content files share one ingest and one fold.


class StrategyPublished(ReferenceEvent, kw_only=True, frozen=True, tag="strategy.published"):
    entry_id: str  # stg_
    revision: int
    path: str  # relative to the registry root
    entry: StrategyEntry


class StrategyRevised(ReferenceEvent, kw_only=True, frozen=True, tag="strategy.revised"):
    entry_id: str
    revision: int
    path: str
    entry: StrategyEntry


class StrategyRetired(ReferenceEvent, kw_only=True, frozen=True, tag="strategy.retired"):
    entry_id: str
    revision: int
    slug: str
    reason: str


class RecipePublished(ReferenceEvent, kw_only=True, frozen=True, tag="recipe.published"):
    entry_id: str  # the chain ID, C1 ...
    revision: int
    path: str
    entry: RecipeEntry


class RecipeRevised(ReferenceEvent, kw_only=True, frozen=True, tag="recipe.revised"):
    entry_id: str
    revision: int
    path: str
    entry: RecipeEntry


class RecipeRetired(ReferenceEvent, kw_only=True, frozen=True, tag="recipe.retired"):
    entry_id: str
    revision: int
    slug: str  # the chain ID
    reason: str


AnyEvent = Union[
    TeamRegistered,
    GameScheduled,
    GameRescheduled,
    GameStateChanged,
    PriceQuoted,
    MarketSuspended,
    MarketReopened,
    PlayerRegistered,
    PlayerUpdated,
    InjuryReported,
    NewsPublished,
    StatLineRecorded,
    ReferencePublished,
    ReferenceRevised,
    ReferenceRetired,
    StrategyPublished,
    StrategyRevised,
    StrategyRetired,
    RecipePublished,
    RecipeRevised,
    RecipeRetired,
]

_encoder = msgspec.json.Encoder(decimal_format="string", order="deterministic")
decoder = msgspec.json.Decoder(AnyEvent)
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def encode(event: AnyEvent) -> bytes:
    return _encoder.encode(event)


def decode(raw: bytes) -> AnyEvent:
    return decoder.decode(raw)


class UnregisteredEvent(ValueError):
    """An event of a type `AnyEvent` does not name: the log has no key or topic for it, and a
    reader of the log could not decode it. Where records arrive (ingest/batches.py) the record
    that built it is dead-lettered with this as its reason."""

    def __init__(self, event: object) -> None:
        kind = type(event)
        tag = getattr(getattr(kind, "__struct_config__", None), "tag", None)
        super().__init__(f"{kind.__name__} (type {tag!r}) is not a registered event type: "
                         "schemas/events.py AnyEvent names every type the log can hold")


def _routes() -> dict[type, tuple[str, str]]:
    """(feed topic, key field) per registered event type, as each type declares them; an import
    error if one does not (a new type must say where the log keeps it and by what key)."""
    routes: dict[type, tuple[str, str]] = {}
    for kind in get_args(AnyEvent):
        feed, key = getattr(kind, "feed", None), getattr(kind, "key_field", None)
        fields = {f.name: f for f in msgspec.structs.fields(kind)}
        if feed not in FEED_TOPICS or key not in fields or fields[key].type is not str or not fields[key].required:
            raise TypeError(f"event type {kind.__name__} must declare `feed` (one of {', '.join(FEED_TOPICS)}) "
                            f"and `key_field` (a required str field of it); it has feed={feed!r}, key_field={key!r}")
        routes[kind] = (feed, key)
    return routes


# one lookup by type: ingest keys and routes every event it sends (its worker reads it directly
# for a batch: one lookup an event instead of event_topic's and event_key's calls)
EVENT_ROUTES: dict[type, tuple[str, str]] = _routes()
_KEY_FIELD: dict[type, str] = {kind: key for kind, (_, key) in EVENT_ROUTES.items()}
_TOPIC: dict[type, str] = {kind: feed for kind, (feed, _) in EVENT_ROUTES.items()}


def event_key(event: AnyEvent) -> str:
    """The entity whose order the log must keep for this event (the Kafka record key)."""
    try:
        field = _KEY_FIELD[type(event)]
    except KeyError:
        raise UnregisteredEvent(event) from None
    return getattr(event, field)


def event_topic(event: AnyEvent) -> str:
    """The feed topic (without dataset prefix) this event belongs on."""
    try:
        return _TOPIC[type(event)]
    except KeyError:
        raise UnregisteredEvent(event) from None


def require_registered(events: Iterable[object]) -> None:
    """`UnregisteredEvent` for the first of `events` whose type the log does not know."""
    for event in events:
        if type(event) not in EVENT_ROUTES:
            raise UnregisteredEvent(event)


def _bare(event: AnyEvent) -> bytes:
    """What the content ID hashes: the event encoded with no ID and the epoch as ingest time."""
    return _encoder.encode(msgspec.structs.replace(event, event_id="", ingest_ts=_EPOCH))


# the content ID's hash, its parameters set once: each ID hashes with a copy (the constructor
# and its keyword cost more than the copy, and stamping runs for every event)
_HASH = hashlib.blake2b(digest_size=16)
_EVENT_PREFIX = PREFIXES["event"]


def _id_of(*bare: bytes) -> str:
    """The content ID of an event's bare bytes, given whole or in parts (hashed as they come:
    never joined into one more copy)."""
    h = _HASH.copy()
    for part in bare:
        h.update(part)
    return _encode(h.digest(), _EVENT_PREFIX)


def content_id(event: AnyEvent) -> str:
    """Deterministic event ID: source, the source's own ID and the content, minus ingest time."""
    return _id_of(_bare(event))


def stamp(event: AnyEvent) -> AnyEvent:
    """The event with its deterministic `event_id` filled in."""
    return msgspec.structs.replace(event, event_id=content_id(event))


# the two fields the content ID leaves out, as the bare encoding holds them
_BARE_ID = b'"event_id":""'
_BARE_INGEST_TS = b'"ingest_ts":' + _encoder.encode(_EPOCH)


def stamp_encoded(event: AnyEvent) -> tuple[AnyEvent, bytes]:
    """`stamp(event)` and `encode(stamp(event))` from one encode (ingest's hot path: the event
    was encoded once for its ID and again for the log). An event not stamped yet is encoded as
    it is and stamped from its bytes (`stamp_value`)."""
    if event.event_id:  # already stamped (or given an ID): hash it as it would be bare
        bare = _bare(event)
        event_id = _id_of(bare)
        value = bare.replace(_BARE_ID, b'"event_id":"' + event_id.encode() + b'"', 1).replace(
            _BARE_INGEST_TS, b'"ingest_ts":' + _encoder.encode(event.ingest_ts), 1)
        return msgspec.structs.replace(event, event_id=event_id), value
    event_id, value = stamp_value(_encoder.encode(event))
    return msgspec.structs.replace(event, event_id=event_id), value


_INGEST_TS = b'"ingest_ts":'


def stamp_value(encoded: bytes) -> tuple[str, bytes]:
    """An event not stamped yet, as `encode` gives it -> its `event_id` and the stamped event's
    encoding, from the bytes alone (ingest's worker encodes, the run's process stamps). The bare
    bytes the ID hashes differ from `encoded` only in `ingest_ts` (the epoch), and the stamped
    event's only in `event_id`: both written in place. Fields are encoded in declaration order
    and the base fields come first (`type`, `v`, `event_id`, `source`, `source_id`, `source_ts`,
    `ingest_ts`): all before `ingest_ts` are scalars, and a string value cannot hold an
    unescaped quote, so the first match of each pattern is that field (and `ingest_ts`, a
    datetime, is a string: its value ends at the next quote)."""
    start = encoded.index(_INGEST_TS) + len(_INGEST_TS)
    end = encoded.index(b'"', start + 1) + 1
    event_id = _id_of(encoded[:start], _BARE_TS_VALUE, encoded[end:])  # the bare bytes in three parts
    return event_id, encoded.replace(_BARE_ID, b'"event_id":"' + event_id.encode() + b'"', 1)


_BARE_TS_VALUE = _encoder.encode(_EPOCH)
