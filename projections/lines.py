"""A market line's derived state: its books and their consensus.

Plain classes, not msgspec structs: they are never stored (a market is stored without its lines,
which are rebuilt from the book quotes, see `assemble`), and compiled by mypyc they are native
classes whose attributes are read as C struct members. The fold reads them for every quote;
generic attribute lookup on structs was a fifth of its time.

A consensus keeps its per-outcome medians as two lists and the first eligible book's outcomes
for names and points; the `ConsensusOutcome` values that rows and deltas show are built from
them on demand (most consensus values are replaced by the next quote before anyone reads them).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, ClassVar

from domain.devig import hold as hold_of
from schemas.bookmakers import NOT_CONSENSUS_INPUTS, PUBLISHED_LINES

EXCHANGE = "exchange"  # the market kind whose quotes never count toward a consensus


class BookQuote:
    """One book's newest prices for one line. Immutable by convention. Stored (the projector's
    cache) as `stored()`, the array `state.StoredQuote` decodes."""

    FIELDS: ClassVar[tuple[str, ...]] = (
        "book", "book_name", "kind", "origin", "outcomes", "odds", "selections", "probabilities", "ts",
    )

    def __init__(self, book: str, book_name: str | None, kind: str, origin: Any, outcomes: tuple[Any, ...],
                 odds: tuple[float, ...] | None, selections: tuple[str, ...],
                 probabilities: tuple[float, ...] | None, ts: int) -> None:
        self.book = book
        self.book_name = book_name
        self.kind = kind
        self.origin = origin  # state.Origin
        self.outcomes = outcomes  # state.QuotedOutcome per outcome, canonical selection order
        # decimal odds aligned with `outcomes`; None when the quote cannot price the line (a bad
        # price, a repeated selection, an outcome at another point, fewer than two outcomes)
        self.odds = odds
        self.selections = selections
        # the default devig method's probabilities of `odds`, computed once per quote
        self.probabilities = probabilities
        self.ts = ts  # origin.source_ts, at hand for the window test
        # derived from the above, not stored; `consensus.eligible_quotes` reads them for every
        # book of a line on every quote, so they are worked out once per quote, here:
        # whether it may count toward a consensus by what it is (a price, not an exchange's
        # market, a book that is a consensus input; suspensions and the window are the line's)
        self.may_count = odds is not None and kind != EXCHANGE and book not in NOT_CONSENSUS_INPUTS
        self.published = book in PUBLISHED_LINES  # a published line's source, not a bookmaker

    def stored(self) -> tuple:
        return (self.book, self.book_name, self.kind, self.origin, self.outcomes, self.odds, self.selections,
                self.probabilities, self.ts)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BookQuote):
            return NotImplemented
        return self.stored() == other.stored()

    def __repr__(self) -> str:
        return f"BookQuote({self.book!r}, odds={self.odds!r}, ts={self.ts})"


class Consensus:
    """A line's consensus under the default devig method, as deltas show it. Immutable by
    convention: once made it is never changed (deltas keep it past the fold)."""

    FIELDS: ClassVar[tuple[str, ...]] = ("books", "hold", "outcomes", "evenness", "newest", "basis")

    def __init__(self, books: int, names: tuple[Any, ...], prices: list[float],
                 probabilities: list[float], evenness: float, newest: int = 0, basis: str = "consensus") -> None:
        self.books = books
        self._hold: float | None = None  # of `prices`, computed when first read (see `hold`)
        self.names = names  # QuotedOutcome per outcome: selection, name, participant_id, point
        self.prices = prices  # median decimal price per outcome
        self.probabilities = probabilities  # median no-vig probability per outcome, renormalised
        self.evenness = evenness  # distance from an even line (every outcome at 1/n): main-line tie-break
        self.newest = newest  # event time of the newest eligible quote: main-line staleness and tie-break
        # "consensus" (at least MIN_BOOKS bookmakers), "published_line" (from a source's published
        # line: fewer bookmakers), "too_few_books" (one bookmaker: its numbers are never shown)
        self.basis = basis

    @property
    def hold(self) -> float:
        """1 - 1/sum(1/price) of the median prices (`domain.devig.hold`). Computed when a row or
        a delta shows it, not per quote: most consensus values are replaced by the next quote
        before anyone reads them, and comparing two consensus values compares their prices."""
        if self._hold is None:
            self._hold = hold_of(self.prices)
        return self._hold

    @property
    def outcomes(self) -> tuple[Any, ...]:
        from projections.state import ConsensusOutcome

        return tuple([
            ConsensusOutcome(o.selection, o.name, o.participant_id, o.point, self.prices[i], self.probabilities[i])
            for i, o in enumerate(self.names)
        ])

    @property
    def served(self) -> bool:
        """Whether its numbers may be shown: one bookmaker's price is not a consensus."""
        return self.basis != "too_few_books"

    @property
    def visible(self) -> tuple:
        return (self.books, self.hold, self.outcomes, self.basis)

    def same_view(self, other: Consensus) -> bool:
        """Whether a delta would show both alike (books, hold, and every outcome)."""
        return (
            # the hold is a function of the prices: equal prices, equal hold
            self.books == other.books and self.basis == other.basis and self.prices == other.prices
            and self.probabilities == other.probabilities and _same_names(self.names, other.names)
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Consensus):
            return NotImplemented
        return self.evenness == other.evenness and self.newest == other.newest and self.same_view(other)

    def __repr__(self) -> str:
        return f"Consensus(books={self.books}, hold={self.hold!r}, outcomes={self.outcomes!r})"


def _same_names(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    if a is b:
        return True
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x.selection != y.selection or x.name != y.name or x.participant_id != y.participant_id or x.point != y.point:
            return False
    return True


class LineState:
    """One line of a market: each book's newest quote (in book order) and their consensus,
    which is derived from the books and the market's suspensions. Changed in place only while
    the fold that made it owns it (`reducers.common.Owned`)."""

    FIELDS: ClassVar[tuple[str, ...]] = ("point", "books", "consensus")

    def __init__(self, point: Decimal | None, books: dict[str, Any], consensus: Consensus | None = None) -> None:
        self.point = point
        self.books = books
        self.consensus = consensus

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LineState):
            return NotImplemented
        return self.point == other.point and self.books == other.books and self.consensus == other.consensus

    def __repr__(self) -> str:
        return f"LineState(point={self.point!r}, books={list(self.books)!r}, consensus={self.consensus!r})"


def fields_of(obj: object) -> list:
    """`enc_hook` for msgspec: these classes as their FIELDS (tests and digests encode whole
    states; the projector itself never stores a line)."""
    names = getattr(type(obj), "FIELDS", None)
    if names is None:
        raise NotImplementedError(f"cannot encode {type(obj).__name__}")
    return [getattr(obj, name) for name in names]
