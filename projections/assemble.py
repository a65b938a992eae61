"""Working state from its stored parts (Postgres `projector_state` + `book_prices`, or the
rocksdict cache): game, market, player and team headers plus each book's quote per line.
Derived members (line consensus, main line, status) are recomputed, never trusted."""

from __future__ import annotations

from decimal import Decimal
from typing import Iterable

import msgspec

from projections.consensus import line_consensus
from projections.quotes import point_of
from projections.event_time import to_us
from projections.reducers.markets import finish_market, make_quote
from projections.rows import decode_part
from projections.lines import BookQuote, LineState
from projections.state import GameState, KeyState, MarketState, Origin, QuotedOutcome


class _StoredOutcome(msgspec.Struct):
    selection: str
    name: str
    participant_id: str | None
    price: Decimal
    price_format: str
    point: Decimal | None


_stored = msgspec.json.Decoder(list[_StoredOutcome])


def _quote_from_row(row, market_type: str, point: Decimal | None) -> BookQuote:
    """A `book_prices` row back into the quote: the same digits give the same odds and floats."""
    outcomes = [QuotedOutcome(o.selection, o.name, o.participant_id, o.price, o.price_format, o.point)
                for o in _stored.decode(row["outcomes"])]
    origin = Origin(row["source"], to_us(row["source_ts"]), to_us(row["ingest_ts"]), row["event_id"])
    return make_quote(row["book"], row["book_name"], row["kind"], origin, outcomes, market_type, point)


def assemble(parts: Iterable[tuple[str, bytes]], quotes: Iterable[tuple[str, str, str, bytes]],
             window_us: int) -> dict[str, KeyState]:
    """`parts`: (part key, blob); `quotes`: (market_id, line_key, book, blob)."""
    states: dict[str, KeyState] = {}
    markets: dict[str, MarketState] = {}
    for part, blob in parts:
        value = decode_part(part, blob)
        if isinstance(value, MarketState):
            markets[value.market_id] = value
        else:
            states[part[2:]] = value
    books: dict[str, dict[str, dict[str, BookQuote]]] = {}
    for market_id, key, book, value in quotes:
        if isinstance(value, bytes):
            quote = decode_part("q", value)
        else:
            quote = _quote_from_row(value, markets[market_id].type, point_of(key))
        books.setdefault(market_id, {}).setdefault(key, {})[book] = quote
    by_game: dict[str, dict[str, MarketState]] = {}
    for market_id, m in sorted(markets.items()):
        lines = {}
        for key, line_books in sorted(books.get(market_id, {}).items()):
            line_books = dict(sorted(line_books.items()))
            consensus = line_consensus(line_books, m.suspend_all, m.suspend_book, window_us)
            lines[key] = LineState(point_of(key), line_books, consensus)
        by_game.setdefault(m.game_id, {})[market_id] = finish_market(msgspec.structs.replace(m, lines=lines), window_us)
    for game_id, game_markets in by_game.items():
        game = states.get(game_id)
        if not isinstance(game, GameState):
            game = GameState(game_id)
        states[game_id] = msgspec.structs.replace(game, markets=game_markets)
    return states
