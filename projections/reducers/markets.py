"""Markets: each book's newest quote per line, suspensions, and the consensus they make.

Per event only the touched lines are recomputed (default devig method); the main line and the
market's status follow from the lines. A delta goes out when a line's consensus, the main line
or the status changed; a book re-quoting the same prices changes nothing visible.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Final, TypeVar

import msgspec
from msgspec.structs import astuple, force_setattr

from projections.consensus import devig, is_suspended, line_consensus, pick_main
from domain.devig import DEFAULT_METHOD
from projections.event_time import to_us
from projections.deltas import (
    M_AS_OF, M_KIND, M_LINES, M_MAIN_KEY, M_MARKET_ID, M_NAME, M_ORIGIN, M_REASON, M_SEQ, M_STATUS,
    M_SUSPEND_ALL, M_SUSPEND_BOOK, MARKET_SUSPENDED, MARKET_UPDATE, Delta, field_names, header_of, market_data,
    not_kept, view_of,
)
from projections.quote_event import QuoteEvent, QuotedOutcomeText
from projections.quotes import decimal_odds, decimal_of, line_key, points_agree, selection_key, selection_rank
from projections.reducers.common import Owned, earliest, origin_from, origin_of
from projections.lines import BookQuote, Consensus, LineState
from projections.state import GameState, MarketState, Origin, QuotedOutcome, Suspension
from schemas.events import MarketSuspended, Outcome, PriceQuoted
from schemas.read_models import MarketStatus
from schemas.wire import market_topic


# A quote's fields are read from one `astuple` of it by position, not one by one: a msgspec
# struct's attribute is a generic lookup from compiled code (~160 instructions, some 30 per
# quote), a tuple's item a C array read. The canonical event and the projector's decoding of it
# (`quote_event`) have the same fields in the same order (checked here); the positions are
# looked up by name once (Final: compiled, static C values).
_QUOTE_FIELDS = field_names(PriceQuoted)
_OUTCOME_FIELDS = field_names(Outcome)
assert field_names(QuoteEvent) == _QUOTE_FIELDS and field_names(QuotedOutcomeText) == _OUTCOME_FIELDS
Q_SOURCE: Final = _QUOTE_FIELDS.index("source")
Q_SOURCE_TS: Final = _QUOTE_FIELDS.index("source_ts")
Q_INGEST_TS: Final = _QUOTE_FIELDS.index("ingest_ts")
Q_EVENT_ID: Final = _QUOTE_FIELDS.index("event_id")
Q_GAME_ID: Final = _QUOTE_FIELDS.index("game_id")
Q_MARKET_ID: Final = _QUOTE_FIELDS.index("market_id")
Q_BOOK: Final = _QUOTE_FIELDS.index("book")
Q_BOOK_NAME: Final = _QUOTE_FIELDS.index("book_name")
Q_KIND: Final = _QUOTE_FIELDS.index("kind")
Q_MARKET_TYPE: Final = _QUOTE_FIELDS.index("market_type")
Q_PERIOD: Final = _QUOTE_FIELDS.index("period")
Q_PARTICIPANT_ID: Final = _QUOTE_FIELDS.index("participant_id")
Q_POINT: Final = _QUOTE_FIELDS.index("point")
Q_MARKET_NAME: Final = _QUOTE_FIELDS.index("market_name")
Q_OUTCOMES: Final = _QUOTE_FIELDS.index("outcomes")
O_SELECTION: Final = _OUTCOME_FIELDS.index("selection")
O_NAME: Final = _OUTCOME_FIELDS.index("name")
O_PARTICIPANT_ID: Final = _OUTCOME_FIELDS.index("participant_id")
O_PRICE: Final = _OUTCOME_FIELDS.index("price")
O_PRICE_FORMAT: Final = _OUTCOME_FIELDS.index("price_format")
O_POINT: Final = _OUTCOME_FIELDS.index("point")


def _outcome_order(o: QuotedOutcome) -> tuple[int, str]:
    return selection_key(o.selection)


def make_quote(book: str, book_name: str | None, kind: str, origin: Origin, outcomes, market_type: str,
               point: Decimal | None) -> BookQuote:
    """A book's quote as consensus needs it: outcomes in canonical order, decimal odds and the
    default method's no-vig probabilities, or no odds when the quote cannot price the line."""
    ordered, odds, selections, probabilities = priced(outcomes, market_type, point)
    return BookQuote(book, book_name, kind, origin, ordered, odds, selections, probabilities, origin.source_ts)


# (outcomes in canonical order, their decimal odds, selections, no-vig probabilities)
Priced = tuple[tuple[QuotedOutcome, ...], tuple[float, ...] | None, tuple[str, ...], tuple[float, ...] | None]


def priced(outcomes, market_type: str, point: Decimal | None) -> Priced:
    """(outcomes in canonical order, their decimal odds, selections, no-vig probabilities) of a
    quote's outcomes; no odds and no probabilities when the quote cannot price the line. A
    function of its arguments' values alone (`book_quote` keeps them by the quote's texts)."""
    ordered: tuple[QuotedOutcome, ...]
    if len(outcomes) == 2:  # most lines: no sort, no key tuples (the same order `sorted` gives)
        a, b = outcomes
        rank_a = selection_rank(a.selection)
        rank_b = selection_rank(b.selection)
        if rank_a != rank_b:
            ordered = (a, b) if rank_a < rank_b else (b, a)
        else:
            ordered = (a, b) if a.selection <= b.selection else (b, a)
    else:
        ordered = tuple(sorted(outcomes, key=_outcome_order))
    names = []
    prices = []
    usable = len(ordered) >= 2
    for o in ordered:  # one pass (this runs for every quote)
        names.append(o.selection)
        d = decimal_odds(o.price, o.price_format)
        prices.append(d)
        if d is None or not points_agree(market_type, point, o.selection, o.point):
            usable = False
    selections = tuple(names)
    odds = tuple(prices)
    if usable and (selections[0] == selections[1] if len(selections) == 2 else len(set(selections)) != len(selections)):
        usable = False
    result = devig(DEFAULT_METHOD, odds) if usable else None
    if result is None:
        return ordered, None, selections, None
    # usable: no None among the odds (mypy cannot see that through `usable`)
    return ordered, odds, selections, result.probabilities  # type: ignore[return-value]


Quote = Any  # a PriceQuoted, or the projector's decoding of one (`quote_event.QuoteEvent`: decimals as text)


def is_quote(e: object) -> bool:
    t = type(e)
    return t is QuoteEvent or t is PriceQuoted


# What `priced` made of a quote's outcomes, by their texts (market type, the line's point, and
# each outcome's selection, price, price format and point as decoded, `quote_event`): books
# repeat the same few prices all the time, and each quote worked out its order, odds and
# no-vig probabilities again. Names are not part of the key (pricing never reads them), so the
# entries are few. Kept only for text (a canonical `PriceQuoted` has Decimals, of which 47.5
# and 47.50 are equal keys but not the same point): equal texts give equal values, so a hit is
# what `priced` would give. The outcomes' order is kept as their positions in the event, and
# their price and point Decimals (`decimal_of` of their texts) in event order: a hit takes them
# from here instead of looking each text up again.
_PRICED: dict[tuple, tuple[tuple[int, ...], tuple[float, ...] | None, tuple[str, ...], tuple[float, ...] | None,
                           tuple[tuple[Any, Any], ...]]]
_PRICED = {}
PRICED_KEPT = 1 << 12  # distinct quotes kept; a log with more starts over
_SELECTIONS: dict[tuple[str, ...], tuple[str, ...]] = {}  # the selections of `_PRICED`'s entries, each once


def book_quote(e: Quote, origin: Origin, point: Decimal | None) -> BookQuote:
    """The event's quote (`origin`: the event's, `origin_of(e)`; `point`: its line's, as a Decimal)."""
    return _book_quote(astuple(e), origin, origin.source_ts, point)


def _book_quote(q: tuple[Any, ...], origin: Origin, ts: int, point: Decimal | None) -> BookQuote:
    """`book_quote` of the quote's `astuple` (`ts`: the origin's source_ts, at hand)."""
    market_type: str = q[Q_MARKET_TYPE]
    events_outcomes: list[Any] = q[Q_OUTCOMES]
    fields: list[tuple[Any, ...]]  # each outcome's, by position (`O_SELECTION` ...)
    known: tuple
    if len(events_outcomes) == 2:  # most quotes: the key as one tuple, not grown item by item
        a: tuple[Any, ...] = astuple(events_outcomes[0])
        b: tuple[Any, ...] = astuple(events_outcomes[1])
        fields = [a, b]
        texts = type(a[O_PRICE]) is str and type(b[O_PRICE]) is str
        known = (market_type, q[Q_POINT], a[O_SELECTION], a[O_PRICE], a[O_PRICE_FORMAT], a[O_POINT],
                 b[O_SELECTION], b[O_PRICE], b[O_PRICE_FORMAT], b[O_POINT])
    else:
        key: list[Any] = [market_type, q[Q_POINT]]
        fields = []
        texts = True
        for o in events_outcomes:
            f: tuple[Any, ...] = astuple(o)
            price = f[O_PRICE]
            texts = texts and type(price) is str
            key += (f[O_SELECTION], price, f[O_PRICE_FORMAT], f[O_POINT])
            fields.append(f)
        known = tuple(key)
    made = _PRICED.get(known) if texts else None
    if made is None:
        outcomes = [QuotedOutcome(f[O_SELECTION], f[O_NAME], f[O_PARTICIPANT_ID], decimal_of(f[O_PRICE]),
                                  f[O_PRICE_FORMAT], decimal_of(f[O_POINT])) for f in fields]
        ordered, odds, selections, probabilities = priced(outcomes, market_type, point)
        if texts:
            if len(_PRICED) >= PRICED_KEPT:
                _PRICED.clear()
                _SELECTIONS.clear()
            # one tuple per selection set: a line's books are then compared by identity
            # (`consensus.line_consensus`), not item by item, whatever their prices
            selections = _SELECTIONS.setdefault(selections, selections)
            order = tuple([next(i for i, o in enumerate(outcomes) if o is x) for x in ordered])
            decimals = tuple([(o.price, o.point) for o in outcomes])
            _PRICED[known] = (order, odds, selections, probabilities, decimals)
    else:
        order, odds, selections, probabilities, decimals = made
        outcomes = [QuotedOutcome(f[O_SELECTION], f[O_NAME], f[O_PARTICIPANT_ID], decimals[i][0], f[O_PRICE_FORMAT],
                                  decimals[i][1]) for i, f in enumerate(fields)]
        ordered = tuple([outcomes[i] for i in order])
    return BookQuote(q[Q_BOOK], q[Q_BOOK_NAME], q[Q_KIND], origin, ordered, odds, selections, probabilities, ts)


def _new_market(game: GameState, e) -> MarketState:
    if is_quote(e):
        return MarketState(e.market_id, game.game_id, e.kind, e.market_type, e.period, e.participant_id, None)
    # a suspension before any quote: identity unknown until the first quote names it
    return MarketState(e.market_id, game.game_id, "", "", "", None, None)


S = TypeVar("S", bound=msgspec.Struct)


def _set(m: S, own: Owned | None, **changes) -> S:
    """`m` with `changes`: in place when this fold owns it, else a copy (`own` None: owns nothing)."""
    if own is not None and own.has(m):
        for name, value in changes.items():
            force_setattr(m, name, value)
        return m
    return msgspec.structs.replace(m, **changes)


def finish_market(m: MarketState, window_us: int, own: Owned | None = None) -> MarketState:
    """Derived members: the main line and the status."""
    f = astuple(m)  # its fields read by position (`deltas.M_LINES` ...)
    lines: dict[str, LineState] = f[M_LINES]
    suspend_all: Suspension | None = f[M_SUSPEND_ALL]
    suspend_book: dict[str, Suspension] = f[M_SUSPEND_BOOK]
    main_key = pick_main(lines, window_us)
    if suspend_all is None and not suspend_book:
        suspended = False  # never suspended: skip looking at every quote
    elif any(line.books for line in lines.values()):
        suspended = all(
            is_suspended(q, suspend_all, suspend_book) for line in lines.values() for q in line.books.values()
        )
    else:
        suspended = suspend_all is not None and suspend_all.suspended
    reason = None
    if suspended:
        latest = [s for s in (suspend_all, *suspend_book.values()) if s is not None and s.suspended]
        reason = max(latest, key=lambda s: s.stamp).reason if latest else None
    status: MarketStatus = "suspended" if suspended else "open"
    if main_key == f[M_MAIN_KEY] and status == f[M_STATUS] and reason == f[M_REASON]:
        return m
    return _set(m, own, main_key=main_key, status=status, reason=reason)


def _own_copy(m: MarketState, own: Owned) -> MarketState:
    """A copy of `m` this fold owns, with a lines dict of its own (the lines stay shared)."""
    for line in m.lines.values():
        own.disown(line)
    return own.add(msgspec.structs.replace(m, lines=dict(m.lines)))


def _with_quote(m: MarketState, f: tuple[Any, ...], q: tuple[Any, ...], key: str, point: Decimal | None,
                window_us: int, own: Owned, origin_e: Origin, ts: int) -> tuple[MarketState, bool]:
    """The market with the book's quote (`f`: the market's `astuple`; `q`: the quote's;
    `origin_e`: its origin, `ts` that origin's source_ts; `point`: its line's, as a Decimal);
    whether anything changed.
    The market (copied first unless this fold owns it) and its quoted line (when this fold
    owns it; else a new line) change in place. A copy has `f`'s fields but its own lines dict."""
    quote = _book_quote(q, origin_e, ts, point)
    book: str = q[Q_BOOK]
    # identity origin and name take every quote into account, stale ones included, so the
    # result does not depend on the order quotes arrive in
    m_origin: Origin | None = f[M_ORIGIN]
    m_name: tuple[str, tuple[int, str]] | None = f[M_NAME]
    origin = earliest(m_origin, quote.origin)
    name = m_name
    market_name: str | None = q[Q_MARKET_NAME]
    if market_name is not None and (name is None or name[1] < quote.origin.stamp):
        name = (market_name, quote.origin.stamp)
    m_lines: dict[str, LineState] = f[M_LINES]
    line = m_lines.get(key)
    old = line.books.get(book) if line is not None else None
    if old is not None and not _older(old, quote):
        # older (or the same) quote: the newest one stands
        if origin is m_origin and name is m_name:
            return m, False
        return _set(m, own, origin=origin, name=name), True
    if not own.has(m):
        m = _own_copy(m, own)
    if not f[M_KIND]:  # suspended before its first quote: the quote names it
        m = _set(m, own, kind=q[Q_KIND], type=q[Q_MARKET_TYPE], period=q[Q_PERIOD], participant_id=q[Q_PARTICIPANT_ID])
    if line is not None and own.has(line):
        if old is None:  # a new book: its place in book order
            line.books = _books_with(line, book, quote)
        else:
            line.books[book] = quote
        line.consensus = line_consensus(line.books, f[M_SUSPEND_ALL], f[M_SUSPEND_BOOK], window_us)
    else:
        books = _books_with(line, book, quote)
        new_line = own.add(LineState(point, books, line_consensus(books, f[M_SUSPEND_ALL], f[M_SUSPEND_BOOK],
                                                                  window_us)))
        lines = m.lines
        lines[key] = new_line
        if line is None:
            force_setattr(m, "lines", dict(sorted(lines.items())))
    # set only what changed (a copy holds `f`'s values): each force_setattr is a call into msgspec
    if name is not m_name:
        force_setattr(m, "name", name)
    if origin is not m_origin:
        force_setattr(m, "origin", origin)
    as_of: int = f[M_AS_OF]
    if quote.ts > as_of:  # max(as_of, quote.ts)
        force_setattr(m, "as_of", quote.ts)
    return m, True


def _older(a: BookQuote, b: BookQuote) -> bool:
    """a.origin.stamp < b.origin.stamp, without building the tuples (`stamp` is a Python
    property: a compiled caller would run it interpreted, for every quote), by the quotes' own
    `ts` (their origins' source_ts, a native attribute: an `Origin`'s is a generic lookup)."""
    return a.ts < b.ts or (a.ts == b.ts and a.origin.event_id < b.origin.event_id)


def _books_with(line: LineState | None, book: str, quote: BookQuote) -> dict[str, BookQuote]:
    """A new books dict of the line with `quote` as the book's (in book order)."""
    if line is None:
        return {book: quote}
    books = dict(line.books)
    known = book in books
    books[book] = quote
    return books if known else dict(sorted(books.items()))


def _with_suspension(m: MarketState, e, window_us: int) -> MarketState:
    origin = origin_of(e)
    suspension = Suspension(origin.stamp, isinstance(e, MarketSuspended), getattr(e, "reason", None))
    if e.book is None:
        if m.suspend_all is not None and m.suspend_all.stamp >= suspension.stamp:
            return m
        m = msgspec.structs.replace(m, suspend_all=suspension)
    else:
        own_suspension = m.suspend_book.get(e.book)
        if own_suspension is not None and own_suspension.stamp >= suspension.stamp:
            return m
        m = msgspec.structs.replace(m, suspend_book={**m.suspend_book, e.book: suspension})
    lines = {}
    for key, line in m.lines.items():
        consensus = line_consensus(line.books, m.suspend_all, m.suspend_book, window_us)
        lines[key] = line if consensus == line.consensus else LineState(line.point, line.books, consensus)
    return msgspec.structs.replace(m, lines=lines, as_of=max(m.as_of, origin.source_ts))


def _shown(named: bool, line: LineState | None) -> Consensus | None:
    """The consensus a market topic shows for a line (None: the line is not shown)."""
    return line.consensus if named and line is not None else None


def _looks_changed(was: Consensus | None, was_main: bool, now: Consensus | None, now_main: bool) -> bool:
    """Whether a market topic shows the line differently now: its consensus (books, hold,
    outcomes) or whether it is the main line, compared without building either view (this runs
    for every quote)."""
    if was is None or now is None:
        return was is not now
    if was_main != now_main:
        return True
    return was is not now and not was.same_view(now)


def reduce_market(state: GameState | None, event, window_us: int,
                  own: Owned | None = None, views: bool = True) -> tuple[GameState, list[Delta]]:
    """`own`: objects this fold made, which may change in place (see `Owned`). Without it the
    call owns only what it makes itself, so nothing of `state` changes: one code path either
    way, and a fold in batches gives what a fold event by event gives. `views` False: the
    deltas are only counted (a rebuild's: published by the live run), so their payloads are
    not taken (`deltas.not_kept`)."""
    if own is None:
        own = Owned()
    q: tuple[Any, ...] | None = astuple(event) if is_quote(event) else None  # its fields (`Q_SOURCE` ...)
    game = state if state is not None else own.add(GameState(event.game_id if q is None else q[Q_GAME_ID]))
    old = game.markets.get(event.market_id if q is None else q[Q_MARKET_ID])
    market = old if old is not None else own.add(_new_market(game, event))
    f = astuple(market)  # its fields read by position (`deltas.M_LINES` ...); `old`'s when there is one
    # what the market showed before this event, taken now (with `own` it may change in place):
    # the header, and the consensus objects (immutable) of the lines that may look different
    before_header = header_of(f) if old is not None else None
    # a named market's header holds its status and main line: not read from the struct again
    if before_header is not None:
        before_status, before_main = before_header[0], before_header[2]
    else:
        before_status = f[M_STATUS] if old is not None else None
        before_main = f[M_MAIN_KEY] if old is not None else None
    named = before_header is not None  # the market had a quote: it has a header
    before: dict[str, Consensus | None] = {}
    source_ts: int | None = None  # the event's, once known
    if q is not None:
        origin = origin_from(q[Q_SOURCE], q[Q_SOURCE_TS], q[Q_INGEST_TS], q[Q_EVENT_ID])
        source_ts = origin.source_ts
        point = decimal_of(q[Q_POINT])
        quoted = line_key(point)
        if old is not None:
            old_lines: dict[str, LineState] = f[M_LINES]
            before[quoted] = _shown(named, old_lines.get(quoted))
            if before_main is not None:
                before[before_main] = _shown(named, old_lines.get(before_main))
        new, moved = _with_quote(market, f, q, quoted, point, window_us, own, origin, source_ts)
        # only the quoted line, and the main line if it moved, can look different now
        keys = {quoted}
    else:
        if old is not None:
            before = {k: _shown(named, line) for k, line in old.lines.items()}
        new = _with_suspension(market, event, window_us)
        moved = new is not market
        keys = set(new.lines)
    if not moved and old is not None:
        return game, []
    new = finish_market(new, window_us, own)
    nf = astuple(new)  # its fields read by position, each once
    new_main: str | None = nf[M_MAIN_KEY]
    new_lines: dict[str, LineState] = nf[M_LINES]
    market_id: str = nf[M_MARKET_ID]
    if before_main is not None:
        keys.add(before_main)
    if new_main is not None:
        keys.add(new_main)
    named_now = nf[M_ORIGIN] is not None
    changed = []
    for k in sorted(keys):
        line = new_lines.get(k)
        # a line this event did not touch shows what it showed before (but was not the main line)
        was = before[k] if k in before else _shown(named, line)
        if _looks_changed(was, k == before_main, _shown(named_now, line), k == new_main):
            changed.append(k)
    header = header_of(nf)
    deltas = []
    if header is not None and (changed or header != before_header):
        last_seq: int = nf[M_SEQ]
        seq = last_seq + 1
        new = _set(new, own, seq=seq)
        kind = MARKET_SUSPENDED if nf[M_STATUS] == "suspended" and before_status != "suspended" else MARKET_UPDATE
        topic = market_topic(market_id)
        ts = source_ts if source_ts is not None else to_us(event.source_ts)
        source = event.source if q is None else q[Q_SOURCE]
        if views:
            # `market_view(new, ...)`: only the seq changed since `nf`
            deltas.append(Delta(topic, kind, seq, ts, source, market_data, view_of(nf, changed, header)))
        else:
            deltas.append(Delta(topic, kind, seq, ts, source, not_kept))
    if not own.has(game):
        for m in game.markets.values():
            own.disown(m)
        game = own.add(msgspec.structs.replace(game, markets=dict(game.markets)))
    game.markets[market_id] = new
    return game, deltas
