"""One book's quote made ready for consensus: line key, decimal odds, canonical outcome order."""

from __future__ import annotations

from decimal import Decimal
from functools import lru_cache
from typing import Any, cast

from domain.exact import InvalidInput
from domain.prices import PriceFormat, to_decimal

# the fixed order outcomes appear in, in read models and deltas; other selections follow by name
SELECTION_ORDER = ("home", "away", "draw", "over", "under", "yes", "no")
_RANK = {s: i for i, s in enumerate(SELECTION_ORDER)}


def selection_rank(selection: str) -> int:
    """A selection's place in SELECTION_ORDER (any other selection after them all)."""
    return _RANK.get(selection, len(SELECTION_ORDER))


def selection_key(selection: str) -> tuple[int, str]:
    return (selection_rank(selection), selection)


def line_key(point: Decimal | None) -> str:
    """The point as text ('' for lines without one): 47.5 and 47.50 are the same line."""
    if point is None:
        return ""
    return _point_key(point)


@lru_cache(maxsize=1 << 12)  # equal Decimals hash alike, and 47.5 and 47.50 have the same key anyway
def _point_key(point: Decimal) -> str:
    if point == 0:
        return "0"
    return format(point.normalize(), "f")


# decimal text of quotes -> one shared Decimal per distinct text (`projections.quote_event`)
_DECIMAL_OF: dict[str, Decimal] = {}
DECIMALS_KEPT = 1 << 16  # distinct texts kept; a log with more starts over (prices repeat)


def decimal_of(value: Any) -> Any:
    """The Decimal of a quote's decimal text (None stays None; a Decimal is itself). Raises
    `decimal.InvalidOperation` (an ArithmeticError) for text that is not a decimal."""
    if not isinstance(value, str):
        return value
    d = _DECIMAL_OF.get(value)
    if d is None:
        d = Decimal(value)
        if len(_DECIMAL_OF) >= DECIMALS_KEPT:
            _DECIMAL_OF.clear()
        _DECIMAL_OF[value] = d
    return d


def point_of(key: str) -> Decimal | None:
    return Decimal(key) if key else None


@lru_cache(maxsize=1 << 16)
def decimal_odds(price: Decimal, price_format: str) -> float | None:
    """Decimal odds as a float (exactly rounded from the exact conversion); None if not a price."""
    try:
        return float(to_decimal(price, cast(PriceFormat, price_format), field=None))
    except (InvalidInput, ValueError, ArithmeticError):
        return None


def points_agree(market_type: str, point: Decimal | None, selection: str, outcome_point: Decimal | None) -> bool:
    """Whether an outcome is priced at the line's point (spreads: the home side's handicap)."""
    if point is None:
        return outcome_point is None
    if outcome_point is None:
        return False
    if market_type == "spreads" or selection in ("home", "away"):
        if selection == "away":
            return outcome_point == -point
        if selection == "home":
            return outcome_point == point
        return abs(outcome_point) == abs(point)
    return outcome_point == point
