"""Record models of the other read-model tables: teams, players and what is reported about them
(injuries, availability, news), sports, competitions and seasons, the search index, the per-book
prices, and the content tables (reference entries, strategies, recipes and their revisions).

A sibling of `schemas/read_models.py`, which holds the models the Wire and the REST market and
game resources share (market lines, markets, games, stat lines) and the functions every model
derives through: `columns` (the writer's columns and Postgres types, `projections.rows.TABLES`),
`row_values` (the row the writer sends), `column_list` (what a reader selects) and `record` (what
it reads back as). The same holds here: one model per table, field order the column order, and a
table's conflict key beside its model. `tests/unit/test_read_models.py` checks the writer against
these models and `tests/integration/test_read_model_columns.py` the migrated tables.

Where to add a column to one of these tables: add the field here, add the column in a migration
(`infra/migrations/dataset/`, safe on a table with rows: nullable or with a default), and set it
where `projections/rows.py` builds the record.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any

import msgspec

from schemas.read_models import KnownProvenance, SourceTimes, pg

# a list of names stored as a Postgres text array (sent as JSON text, `projections.pg_writer`)
TextArray = Annotated[list[str], pg("text[]")]
# a schemas struct stored whole as JSON (a reference entry, a strategy, a recipe): the content
# kinds own their shapes (schemas/library.py, schemas/strategies.py), the table keeps the document
Document = Any


# ---- teams and players -------------------------------------------------------------------------


class TeamRecord(msgspec.Struct, kw_only=True):
    """One row of `teams`."""

    id: str  # tm_
    sport: str
    competition: str
    name: str
    abbreviation: str | None
    aliases: TextArray  # other names the team is known by (search terms)
    source: str
    as_of: datetime
    provenance: KnownProvenance


TEAM_KEY = ("id",)


class PlayerRecord(msgspec.Struct, kw_only=True):
    """One row of `players`."""

    id: str  # plr_
    sport: str
    competition: str
    name: str
    position: str | None
    team_id: str | None
    source: str
    as_of: datetime
    provenance: KnownProvenance


PLAYER_KEY = ("id",)


class InjuryRecord(msgspec.Struct, kw_only=True):
    """One row of `injuries`: a player's current injury report, as the source words it."""

    player_id: str
    team_id: str | None
    status: str | None  # the report's game status (Questionable, Out, ...)
    roster_status: str | None
    detail: str | None
    secondary_detail: str | None
    practice: str | None
    game_day: str | None
    season: int | None
    week: int | None
    game_id: str | None
    reported_at: datetime | None
    source: str
    as_of: datetime
    provenance: SourceTimes


INJURY_KEY = ("player_id",)


class AvailabilityRecord(msgspec.Struct, kw_only=True):
    """One row of `availability`: a player's availability as one source states it."""

    player_id: str
    source: str
    status: str
    game_id: str | None
    season: int | None
    week: int | None
    as_of: datetime
    provenance: SourceTimes


AVAILABILITY_KEY = ("player_id", "source")


class NewsRecord(msgspec.Struct, kw_only=True):
    """One row of `news`: one item published about a player."""

    player_id: str
    event_id: str
    kind: str  # injury, transaction, news
    headline: str
    published_at: datetime | None
    source: str
    as_of: datetime
    provenance: SourceTimes


NEWS_KEY = ("player_id", "event_id")


# ---- the registry and the search index ------------------------------------------------------------


class SportRecord(msgspec.Struct, kw_only=True):
    """One row of `sports` (from our registry, as of the newest event that named it)."""

    id: str
    slug: str
    name: str
    source: str
    as_of: datetime
    provenance: SourceTimes
    input_key: str  # source time and event ID of that event: the upsert keeps the greatest


SPORT_KEY = ("id",)


class CompetitionRecord(msgspec.Struct, kw_only=True):
    """One row of `competitions`."""

    id: str
    slug: str
    name: str
    sport: str
    timezone: str
    source: str
    as_of: datetime
    provenance: SourceTimes
    input_key: str


COMPETITION_KEY = ("id",)


class SeasonProvenance(SourceTimes, kw_only=True):
    """A season's provenance: that of the games it spans, and where its dates come from."""

    dates_source: str | None  # the sourced table's citation (schemas/season_dates.py); None: no dates


class SeasonRecord(msgspec.Struct, kw_only=True):
    """One row of `seasons`: computed by the writer from the games it spans (their sources and
    times), its dates from the sourced table (`schemas.season_dates`), never from the games."""

    id: str  # ssn_
    competition: str  # the competition's slug
    label: str  # "2024", "2024-25"
    year: int | None  # the label's first year
    starts_on: date | None
    ends_on: date | None
    source: str  # the games' sources
    as_of: datetime  # the newest game's
    provenance: SeasonProvenance


SEASON_KEY = ("id",)


class SearchRecord(msgspec.Struct, kw_only=True):
    """One row of `search_index`: a team, player, game, competition or reference entry by name."""

    id: str
    kind: str  # team, player, game, competition, or a reference entry's kind
    name: str
    competition: str | None
    context: dict[str, Any]  # what a result shows beside the name (per kind)
    terms: str  # normalised search terms (projections.search_terms)
    as_of: datetime


SEARCH_KEY = ("id",)


# ---- per-book prices (internal: no route reads them) -------------------------------------------------


class BookPriceRecord(msgspec.Struct, kw_only=True):
    """One row of `book_prices`: one bookmaker's quote of one line."""

    market_id: str
    line_key: str
    book: str
    kind: str  # the bookmaker's kind (schemas/bookmakers.py)
    suspended: bool
    outcomes: list[dict[str, Any]]  # selection, name, participant_id, price, price_format, point
    source: str
    source_ts: datetime
    event_id: str
    book_name: str | None
    ingest_ts: datetime | None
    game_id: str | None
    state: bytes | None  # not written: the quote is rebuilt from the columns on load


BOOK_PRICE_KEY = ("market_id", "line_key", "book")


# ---- content: reference entries, strategies, recipes --------------------------------------------------


class ReferenceEntryRecord(msgspec.Struct, kw_only=True):
    """One row of `reference_entries` (its generated `document` column is Postgres's own)."""

    id: str
    slug: str
    kind: str
    status: str  # published, retired
    title: str
    aliases: TextArray
    summary: str
    body: str
    jurisdictions: TextArray
    products: TextArray
    operators: TextArray
    related: TextArray  # entry IDs
    formulas: TextArray  # formula card IDs
    wagering: bool
    sources: Document  # the entry's cited sources, as the entry gives them
    reviewed_at: date
    review_due: date
    version: int
    revision: int
    terms: str
    source: str
    as_of: datetime
    provenance: SourceTimes


class StrategyRecord(msgspec.Struct, kw_only=True):
    """One row of `strategies`."""

    id: str
    slug: str
    family: str
    ledger_row: int
    status: str
    name: str
    verdict: str
    route: str
    record: Document  # the strategy entry (schemas.strategies)
    version: int
    revision: int
    reviewed_at: date
    review_due: date
    source: str
    as_of: datetime
    provenance: SourceTimes


class RecipeRecord(msgspec.Struct, kw_only=True):
    """One row of `recipes`."""

    id: str
    number: int
    status: str
    name: str
    record: Document  # the recipe entry (schemas.strategies)
    version: int
    revision: int
    reviewed_at: date
    review_due: date
    source: str
    as_of: datetime
    provenance: SourceTimes


CONTENT_KEY = ("id",)


class RevisionRecord(msgspec.Struct, kw_only=True):
    """One row of a content kind's history (`reference_revisions`, `strategy_revisions`,
    `recipe_revisions`: one shape for the three)."""

    entry_id: str
    revision: int
    action: str  # published, revised, retired
    version: int
    entry: Document  # the entry as of this revision; null when retired
    reason: str | None
    source: str
    as_of: datetime
    provenance: SourceTimes


REVISION_KEY = ("entry_id", "revision")
