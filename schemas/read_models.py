"""Read-model records: one typed model per row the projector writes, and what derives from it.

Why here, and why this name: a record is written by `projections` (the rows and the Postgres
writer), read by `wire` (snapshots) and by `api` (REST resources), and described by the OpenAPI
and AsyncAPI documents. `schemas` is the one layer all of them may import, and "read model" is
what the rest of the code and the docs call these tables. Pure: msgspec only.

What derives from a record model (tests/unit/test_read_models.py checks each):
- the table's columns and their Postgres types, in the order the writer sends them
  (`columns`, used by `projections.rows.TABLES`), and the row tuple itself (`row_values`);
- the columns a reader selects (`column_list`) and the typed record it gets back (`record`);
- the Wire line (`LineData`, the base of `MarketLineRecord`): snapshots and deltas are built as
  that struct, and the AsyncAPI document is generated from it; likewise the Wire's market header
  is `MarketHeader`, the base of `MarketRecord`;
- the REST market line (`api.resources.markets.MarketLine`) declares the fields it shares with
  the record with the record's own types, and is built from a `MarketLineRecord`, reading the
  stored figures (hold, overround, books, prices, probabilities) and never recomputing them; its
  outcome (`OutcomeQuote`) is an `Outcome`, as the stored `LineOutcome` is.

Where to add a field to a market line: add it to `MarketLineRecord` (or to `LineData` when the
Wire shows it too), add the column in a migration, and set it in `projections.rows`; the
writer, the readers' column lists and both documents follow.
"""

from __future__ import annotations

import typing
from datetime import date, datetime
from decimal import Decimal
from typing import Annotated, Any, Literal, Mapping, Sequence

import msgspec

from schemas.events import MarketKind

_json = msgspec.json.Encoder(decimal_format="string", order="deterministic")


def pg(pgtype: str) -> msgspec.Meta:
    """The Postgres type of a column whose Python type does not say it (a `numeric` point served
    as a JSON number, a `bigint` counter)."""
    return msgspec.Meta(extra={"pg": pgtype})


# ---- the fields a market line's views share: one definition of each --------------------------

Point = Annotated[float | None, pg("numeric")]  # the line's point; null for lines without one (h2h)
Books = int  # eligible bookmakers (exchanges, DFS operators and published lines are not counted)
Hold = float | None  # 1 - 1 / sum(1 / consensus price); null when the line's values are not served
# sum(1 / consensus price) - 1 (domain.devig.overround): stored beside the hold, so REST serves it as
# stored; null when the line's values are not served
Overround = float | None
# what the values are: `consensus` of at least 2 bookmakers; `published_line`, a source's own line
# for the game (fewer bookmakers; `source` names it); `too_few_books`: one bookmaker quotes the
# line, so no value is served (price, probability and hold are null)
LineBasis = Literal["consensus", "published_line", "too_few_books"]


class Outcome(msgspec.Struct, kw_only=True):
    """Which outcome of a line: what every view of it (stored, Wire, REST) starts with."""

    selection: str  # home, away, draw, over, under, yes, no
    name: str
    participant_id: str | None
    point: float | None


# a stored outcome: its consensus figures (the Wire shows it too; no docstring, which the AsyncAPI
# document would carry as a description)
class LineOutcome(Outcome, kw_only=True):
    # consensus decimal price: the median of the books' decimal prices; null when the line's
    # values are not served (`basis` too_few_books)
    price: float | None
    # consensus no-vig probability per devig method (the Wire carries the default method only)
    probability: dict[str, float | None]


class LineData(msgspec.Struct, kw_only=True):
    """A market line as the Wire shows it, in snapshots and deltas alike."""

    line_key: str  # the point as text, "" without a point
    point: Point
    is_main: bool
    books: Books
    hold: Hold
    outcomes: list[LineOutcome]
    basis: LineBasis = "consensus"


class DevigNote(msgspec.Struct, kw_only=True, frozen=True, gc=False):
    """What one devig method reported for a line.

    Outside the cyclic collector (gc=False, flags a tuple: it can be in no cycle), because the
    projector memoises notes by the tens of thousands (projections.rows._methods) and each one,
    with its flags list, was walked by every full collection."""

    books: int  # the books its median was taken over
    flags: tuple[str, ...]  # too_few_books, failed, out_of_range, not_converged
    message: str | None
    parameter: float | None  # the method's median parameter (shin's z, power's k, ...), if it has one


class SourceTimes(msgspec.Struct, kw_only=True):
    """A derived row's provenance: its sources, and the newest source and ingest times of its inputs."""

    source: str
    source_ts: datetime | None
    ingest_ts: datetime


class MarketLineRecord(LineData, kw_only=True):
    """One row of `market_lines`: a line's consensus under every devig method."""

    market_id: str
    overround: Overround
    methods: dict[str, DevigNote]  # per devig method
    source: str  # the sources of the quotes the values come from
    as_of: datetime
    provenance: SourceTimes


MARKET_LINE_KEY = ("market_id", "line_key")


# suspended when every quote of the market is suspended (projections.reducers.markets.finish_market)
MarketStatus = Literal["open", "suspended"]


class MarketHeader(msgspec.Struct, kw_only=True):
    """A market's identity and state: the leading columns of its `markets` row, and the header of
    its Wire payload (`schemas.wire.MarketData`, which names `id` `market_id` and `status_reason`
    `reason`, in the same places)."""

    id: str  # mkt_
    game_id: str
    kind: MarketKind
    type: str  # h2h, spreads, totals, prop type
    period: str
    participant_id: str | None
    name: str | None
    status: MarketStatus
    status_reason: str | None
    main_point: Point  # the main line's point
    books: Books  # on the main line


class MarketRecord(MarketHeader, kw_only=True):
    """One row of `markets`: its header, then where it came from; its lines are `MarketLineRecord`s."""

    source: str
    as_of: datetime
    provenance: SourceTimes
    last_seq: Annotated[int, pg("bigint")]  # the `market:` topic's last seq


MARKET_KEY = ("id",)


# ---- games and stat lines ------------------------------------------------------------------------


class KnownBy(msgspec.Struct, kw_only=True):
    source: str
    source_id: str


class KnownProvenance(SourceTimes, kw_only=True):
    """The provenance of something several sources name: every source's own ID for it too."""

    known_by: list[KnownBy]


class GameRecord(msgspec.Struct, kw_only=True):
    """One row of `games`: the game as scheduled, and its state as last reported."""

    id: str
    name: str
    sport: str
    competition: str
    season: str | None
    week: int | None
    season_type: str | None  # as the source names it (REG, WC, DIV, CON, SB)
    kickoff_at: datetime | None
    kickoff_date: date | None  # the day, when the source gives no time
    kickoff_sort: datetime  # the kickoff, or the day's start in the competition's time zone
    venue: str | None
    neutral_site: bool
    home_team_id: str
    away_team_id: str
    status: str  # as reported (domain.game_status); readers serve the status against the clock
    score_home: int | None
    score_away: int | None
    period: str | None
    clock: str | None
    possession: str | None  # tm_ ID
    last_play: str | None
    state_provenance: SourceTimes | None  # where the state came from; null before any report
    source: str
    as_of: datetime
    provenance: KnownProvenance
    last_seq: Annotated[int, pg("bigint")]  # the `game:` topic's last seq


GAME_KEY = ("id",)

StatNumber = int | str  # a whole number, or a decimal's exact digits (projections.stat_numbers)


class StatLineRecord(msgspec.Struct, kw_only=True):
    """One row of `stat_lines`: a player's game line, or a season line under one basis."""

    line_key: str  # subject|game|... or subject|season|source|season|type|basis
    subject_id: str  # plr_ or tm_
    team_id: str | None
    game_id: str | None  # null for a season line
    season: str | None
    week: int | None
    season_type: str | None  # as the source names it
    basis: str | None  # total, per_game, rate
    stats: Mapping[str, StatNumber]
    source: str
    as_of: datetime
    provenance: SourceTimes


STAT_LINE_KEY = ("line_key",)


# ---- what derives from a record model ----------------------------------------------------------

_PG_OF_TYPE: dict[Any, str] = {
    str: "text", int: "int", bool: "boolean", float: "float8", datetime: "timestamptz", date: "date",
    Decimal: "numeric", bytes: "bytea",
}


def _pg_type(hint: Any) -> str:
    if typing.get_origin(hint) is Annotated:
        for meta in hint.__metadata__:
            if isinstance(meta, msgspec.Meta) and meta.extra and "pg" in meta.extra:
                return str(meta.extra["pg"])
        hint = hint.__origin__
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) in (typing.Union, type(int | None)) and len(args) == 1:
        hint = args[0]  # T | None: nullable T
    if hint in _PG_OF_TYPE:
        return _PG_OF_TYPE[hint]
    if typing.get_origin(hint) is Literal:
        return "text"
    return "jsonb"  # structs, lists and dicts are stored as JSON


def columns(model: type[msgspec.Struct]) -> tuple[tuple[str, str], ...]:
    """(column, Postgres type) of every field of a record model, in field order."""
    hints = typing.get_type_hints(model, include_extras=True)
    return tuple((name, _pg_type(hints[name])) for name in model.__struct_fields__)


def column_list(model: type[msgspec.Struct], prefix: str = "", computed: Mapping[str, str] | None = None, *,
                only: Sequence[str] | None = None, as_prefix: str = "") -> str:
    """The columns of a record model as a select list (`prefix`: a table alias and a dot).
    `computed`: fields a reader computes rather than reads as stored (`{field: SQL}`), selected
    under the field's own name, so the row still reads back as the record (a game's status is
    served against the clock, see domain.game_status). `only`: the fields a reader needs when it
    reads part of a record (the teams beside a game), in model order. `as_prefix`: the names the
    columns are selected as, prefixed (`home_` for `h.name AS home_name`). A name that is not a
    field of the model is an error, so a list cannot drift from its model."""
    computed = computed or {}
    unknown = (set(computed) | set(only or ())) - set(model.__struct_fields__)
    if unknown:
        raise ValueError(f"{model.__name__} has no field {sorted(unknown)}")
    names = [name for name in model.__struct_fields__ if only is None or name in only]
    out = []
    for name in names:
        expression = computed[name] if name in computed else prefix + name
        out.append(f"{expression} AS {as_prefix}{name}" if name in computed or as_prefix else expression)
    return ", ".join(out)


def _numeric(value: Any) -> Decimal | None:
    """A float point as the exact decimal it prints as (the half-point lines all fit a float)."""
    return None if value is None else Decimal(format(Decimal(repr(value)).normalize(), "f"))


_COLUMNS_OF: dict[type, tuple[tuple[str, str], ...]] = {}


def row_values(record: msgspec.Struct) -> tuple:
    """A record as the writer sends it: its fields in column order, JSON and text-array columns
    as JSON text and numeric columns as exact decimals; a null field is SQL null."""
    model = type(record)
    cols = _COLUMNS_OF.get(model)
    if cols is None:
        cols = _COLUMNS_OF[model] = columns(model)
    out = []
    for (name, pgtype), value in zip(cols, msgspec.structs.astuple(record)):
        if value is None:
            out.append(None)  # SQL null, never JSON null
        elif pgtype == "jsonb" or pgtype == "text[]":  # a text array is sent as JSON (projections.pg_writer)
            out.append(_json.encode(value).decode())
        elif pgtype == "numeric":
            out.append(_numeric(value))
        else:
            out.append(value)
    return tuple(out)


def record(model: type[msgspec.Struct], row: Mapping[str, Any]) -> Any:
    """A stored row (JSON columns decoded) as its record model; columns not selected keep no
    default, so a reader selects `column_list(model)`."""
    values = {name: row[name] for name in model.__struct_fields__}
    return msgspec.convert(values, model, strict=False)


def wire_line(line: LineData, method: str) -> LineData:
    """The Wire's view of a stored line (its `LineData` columns, or a whole record): each
    outcome's probability under the one method the Wire carries."""
    return LineData(
        line_key=line.line_key, point=line.point, is_main=line.is_main, books=line.books, hold=line.hold,
        outcomes=[
            LineOutcome(selection=o.selection, name=o.name, participant_id=o.participant_id, point=o.point,
                        price=o.price, probability={method: o.probability.get(method)})
            for o in line.outcomes
        ],
        basis=line.basis,
    )
