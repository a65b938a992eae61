"""Markets: each book's newest quote per line, suspensions, and the consensus they make.

Per event only the touched lines are recomputed (default devig method); the main line and the
market's status follow from the lines. A delta goes out when a line's consensus, the main line
or the status changed; a book re-quoting the same prices changes nothing visible.
"""

from __future__ import annotations

from decimal import Decimal

import msgspec

from projections.consensus import devig, is_suspended, line_consensus, pick_main
from projections.odds.devig import DEFAULT_METHOD
from projections.event_time import to_us
from projections.deltas import MARKET_SUSPENDED, MARKET_UPDATE, Delta, line_visible, market_data, market_header
from projections.quotes import decimal_odds, line_key, points_agree, selection_key
from projections.reducers.common import earliest, origin_of
from projections.state import BookQuote, GameState, LineState, MarketState, Origin, QuotedOutcome, Suspension
from schemas.events import MarketSuspended, PriceQuoted
from schemas.wire import market_topic


def _outcome_order(o: QuotedOutcome) -> tuple[int, str]:
    return selection_key(o.selection)


def make_quote(book: str, book_name: str | None, kind: str, origin: Origin, outcomes, market_type: str,
               point: Decimal | None) -> BookQuote:
    """A book's quote as consensus needs it: outcomes in canonical order, decimal odds and the
    default method's no-vig probabilities, or no odds when the quote cannot price the line."""
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
    if usable and len(set(selections)) != len(selections):
        usable = False
    result = devig(DEFAULT_METHOD, odds) if usable else None
    if result is None:
        return BookQuote(book, book_name, kind, origin, ordered, None, selections, None, origin.source_ts)
    # usable: no None among the odds (mypy cannot see that through `usable`)
    return BookQuote(book, book_name, kind, origin, ordered, odds, selections,  # type: ignore[arg-type]
                     result.probabilities, origin.source_ts)


def book_quote(e: PriceQuoted) -> BookQuote:
    outcomes = [QuotedOutcome(o.selection, o.name, o.participant_id, o.price, o.price_format, o.point)
                for o in e.outcomes]
    return make_quote(e.book, e.book_name, e.kind, origin_of(e), outcomes, e.market_type, e.point)


def _new_market(game: GameState, e) -> MarketState:
    if isinstance(e, PriceQuoted):
        return MarketState(e.market_id, game.game_id, e.kind, e.market_type, e.period, e.participant_id, None)
    # a suspension before any quote: identity unknown until the first quote names it
    return MarketState(e.market_id, game.game_id, "", "", "", None, None)


def finish_market(m: MarketState) -> MarketState:
    """Derived members: the main line and the status."""
    main_key = pick_main(m.lines)
    if m.suspend_all is None and not m.suspend_book:
        suspended = False  # never suspended: skip looking at every quote
    elif any(line.books for line in m.lines.values()):
        suspended = all(
            is_suspended(q, m.suspend_all, m.suspend_book) for line in m.lines.values() for q in line.books.values()
        )
    else:
        suspended = m.suspend_all is not None and m.suspend_all.suspended
    reason = None
    if suspended:
        latest = [s for s in (m.suspend_all, *m.suspend_book.values()) if s is not None and s.suspended]
        reason = max(latest, key=lambda s: s.stamp).reason if latest else None
    status = "suspended" if suspended else "open"
    if main_key == m.main_key and status == m.status and reason == m.reason:
        return m
    return msgspec.structs.replace(m, main_key=main_key, status=status, reason=reason)


def _with_quote(m: MarketState, e: PriceQuoted, window_us: int) -> MarketState:
    quote = book_quote(e)
    if not m.kind:  # suspended before its first quote: the quote names it
        m = msgspec.structs.replace(m, kind=e.kind, type=e.market_type, period=e.period, participant_id=e.participant_id)
    # identity origin and name take every quote into account, stale ones included, so the
    # result does not depend on the order quotes arrive in
    origin = earliest(m.origin, quote.origin)
    name = m.name
    if e.market_name is not None and (name is None or name[1] < quote.origin.stamp):
        name = (e.market_name, quote.origin.stamp)
    key = line_key(e.point)
    line = m.lines.get(key)
    old = line.books.get(e.book) if line is not None else None
    if old is not None and old.origin.stamp >= quote.origin.stamp:
        # older (or the same) quote: the newest one stands
        if origin is m.origin and name is m.name:
            return m
        return msgspec.structs.replace(m, origin=origin, name=name)
    if line is not None:
        books = dict(line.books)
        books[e.book] = quote
        if old is None:
            books = dict(sorted(books.items()))
    else:
        books = {e.book: quote}
    consensus = line_consensus(books, m.suspend_all, m.suspend_book, window_us)
    lines = dict(m.lines)
    lines[key] = LineState(e.point, books, consensus)
    if line is None:
        lines = dict(sorted(lines.items()))
    return msgspec.structs.replace(
        m, lines=lines, name=name, origin=origin, as_of=max(m.as_of, quote.origin.source_ts),
    )


def _with_suspension(m: MarketState, e, window_us: int) -> MarketState:
    origin = origin_of(e)
    suspension = Suspension(origin.stamp, isinstance(e, MarketSuspended), getattr(e, "reason", None))
    if e.book is None:
        if m.suspend_all is not None and m.suspend_all.stamp >= suspension.stamp:
            return m
        m = msgspec.structs.replace(m, suspend_all=suspension)
    else:
        own = m.suspend_book.get(e.book)
        if own is not None and own.stamp >= suspension.stamp:
            return m
        m = msgspec.structs.replace(m, suspend_book={**m.suspend_book, e.book: suspension})
    lines = {}
    for key, line in m.lines.items():
        consensus = line_consensus(line.books, m.suspend_all, m.suspend_book, window_us)
        lines[key] = line if consensus == line.consensus else LineState(line.point, line.books, consensus)
    return msgspec.structs.replace(m, lines=lines, as_of=max(m.as_of, origin.source_ts))


def reduce_market(state: GameState | None, event, window_us: int) -> tuple[GameState, list[Delta]]:
    game = state if state is not None else GameState(event.game_id)
    old = game.markets.get(event.market_id)
    market = old if old is not None else _new_market(game, event)
    if isinstance(event, PriceQuoted):
        new = _with_quote(market, event, window_us)
        # only the quoted line, and the main line if it moved, can look different now
        keys = {line_key(event.point)}
    else:
        new = _with_suspension(market, event, window_us)
        keys = set(new.lines)
    if new is market and old is not None:
        return game, []
    new = finish_market(new)
    if old is not None:
        keys.update(k for k in (old.main_key, new.main_key) if k is not None)
    changed = [k for k in sorted(keys) if line_visible(old, k) != line_visible(new, k)]
    header = market_header(new)
    deltas = []
    if header is not None and (changed or header != market_header(old)):
        seq = new.seq + 1
        new = msgspec.structs.replace(new, seq=seq)
        kind = MARKET_SUSPENDED if new.status == "suspended" and (old is None or old.status != "suspended") else MARKET_UPDATE
        deltas.append(Delta(
            market_topic(new.market_id), kind, seq, to_us(event.source_ts), event.source, market_data, new, changed
        ))
    markets = dict(game.markets)
    markets[new.market_id] = new
    return msgspec.structs.replace(game, markets=markets), deltas

