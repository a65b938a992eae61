"""Market resources: a game's markets (list items) and the market detail record.

The detail record is ours to design. It serves consensus values only:
per outcome the consensus price (median decimal price across eligible books), the consensus
no-vig probability under the requested devig method, and the fair price 1/p; per line the
hold, overround and number of books, as the projection stored them. Never a book's name or a
book's price.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import msgspec

from api.conventions import RG_LINE
from api.resources.common import Meta, Provenance, attribution_for, stored_provenance, utc
from api.resources.freshness import market_stale_after_ms
from api.resources.odds_display import Price, fair_price, percent, price
from domain.devig import METHODS, Method
from schemas.read_models import (
    Books, DevigNote, Hold, LineBasis, LineOutcome, MarketHeader, MarketLineRecord, MarketRecord, Outcome, Overround,
    Point, record,
)
from schemas.wire import market_topic

DevigMethod = Method  # the methods `?devig=` accepts: the domain's own list


def _header() -> list[tuple[str, Any]]:
    hints = typing.get_type_hints(MarketHeader, include_extras=True)
    return [(name, hints[name]) for name in MarketHeader.__struct_fields__]


# The REST market is the common metadata, the stored market header (`MarketHeader`: its fields,
# types and order, which the `markets` row and the Wire payload share), then its provenance. msgspec
# gives a struct one base with fields (`Meta` here), so the header's fields are taken from its
# declaration, not written out again: a field added to the header is served here too.
Market = msgspec.defstruct(
    "Market", [*_header(), ("provenance", Provenance)], bases=(Meta,), kw_only=True,
    tag_field="object", tag="market", module=__name__,
    namespace={"__doc__": "A market by identity and state; prices are on the detail record."},
)


class OutcomeQuote(Outcome, kw_only=True):
    """One outcome of a line: consensus price, no-vig probability and fair price."""

    consensus_price: Price | None
    no_vig_probability: float | None  # null when the method could not be applied to this line
    no_vig_probability_display: str | None
    fair_price: Price | None


class DevigNotes(msgspec.Struct, kw_only=True):
    """What the devig method reported for this line (e.g. a probability outside (0, 1))."""

    flags: list[str]
    message: str | None


class MarketLine(msgspec.Struct, kw_only=True):
    """A stored line (`schemas.read_models.MarketLineRecord`) as REST serves it: the fields it
    shares with the record have the record's types and values; the rest are views of them
    (prices in both formats, the requested method's probability and notes, displays)."""

    point: Point
    is_main: bool
    basis: LineBasis  # `too_few_books`: no value is served (`devig_notes` says so)
    source: str  # the sources of the quotes the values come from
    books: Books
    hold: Hold  # as the projection stored it
    hold_display: str | None
    overround: Overround  # as the projection stored it
    overround_display: str | None
    devig_notes: DevigNotes
    as_of: datetime
    outcomes: list[OutcomeQuote]


class Devig(msgspec.Struct, kw_only=True):
    method: DevigMethod
    card: str  # formula card used, `devig.<method>@<version>`
    methods: list[DevigMethod]  # every method `?devig=` accepts


class GameSummary(msgspec.Struct, kw_only=True):
    id: str
    name: str
    competition: str | None
    kickoff_at: datetime | None
    status: str


class MarketDetail(Market, kw_only=True):
    """`GET /v1/markets/{market_id}`: consensus prices and no-vig probabilities per outcome."""

    game: GameSummary
    devig: Devig
    main_line: MarketLine | None
    alternate_lines: list[MarketLine]  # by point, ascending


def _market_fields(row: Mapping[str, Any], request_id: str | None) -> dict[str, Any]:
    """The market's members, from its row read as its record (`MarketRecord`) with its game's
    served status beside it."""
    m: MarketRecord = record(MarketRecord, row)
    return dict(
        as_of=utc(m.as_of), source=m.source, stale_after_ms=market_stale_after_ms(row["game_status"]),
        attribution=attribution_for([m.source]), request_id=request_id,
        live_topics=[market_topic(m.id)], rg_line=RG_LINE,
        **{name: getattr(m, name) for name in MarketHeader.__struct_fields__},
        provenance=stored_provenance(m.provenance),
    )


def market(row: Mapping[str, Any], request_id: str | None) -> Market:
    return Market(**_market_fields(row, request_id))


def _outcome(o: LineOutcome, method: str) -> OutcomeQuote:
    p = o.probability.get(method)
    return OutcomeQuote(
        selection=o.selection, name=o.name, participant_id=o.participant_id, point=o.point,
        consensus_price=price(o.price), no_vig_probability=p, no_vig_probability_display=percent(p),
        fair_price=fair_price(p),
    )


def _notes(note: DevigNote | None, method: str, probabilities: Sequence[float | None]) -> DevigNotes:
    flags = [] if note is None else list(note.flags)
    message = None if note is None else note.message
    if any(p is None for p in probabilities) and "not_computed" not in flags:
        flags.append("not_computed")
        message = message or f"The {method} method gave no probability for every outcome of this line."
    return DevigNotes(flags=flags, message=message)


def market_line(row: MarketLineRecord | Mapping[str, Any], method: str) -> MarketLine:
    """A stored line (a record, or a `market_lines` row with its columns) as served: the stored
    figures (hold, overround, prices, probabilities) as they are, never computed again."""
    line: MarketLineRecord = row if isinstance(row, MarketLineRecord) else record(MarketLineRecord, row)
    outcomes = [_outcome(o, method) for o in line.outcomes]
    return MarketLine(
        point=line.point, is_main=line.is_main, basis=line.basis, source=line.source, books=line.books,
        hold=line.hold, hold_display=percent(line.hold), overround=line.overround,
        overround_display=percent(line.overround),
        devig_notes=_notes(line.methods.get(method), method, [o.no_vig_probability for o in outcomes]),
        as_of=utc(line.as_of), outcomes=outcomes,
    )


def market_detail(
    row: Mapping[str, Any], lines: Sequence[MarketLineRecord | Mapping[str, Any]], method: str, card: str,
    request_id: str | None,
) -> MarketDetail:
    served = [market_line(line, method) for line in lines]
    main = next((line for line in served if line.is_main), None)
    fields = _market_fields(row, request_id)
    if served:  # a derived value is as of its newest input
        fields["as_of"] = max([fields["as_of"], *(line.as_of for line in served)])
    return MarketDetail(
        **fields,
        game=GameSummary(
            id=row["game_id"], name=row["game_name"], competition=row["game_competition"],
            kickoff_at=utc(row["game_kickoff_at"]), status=row["game_status"],
        ),
        devig=Devig(method=method, card=card, methods=list(METHODS)),  # type: ignore[arg-type]
        main_line=main,
        alternate_lines=[line for line in served if not line.is_main],
    )
