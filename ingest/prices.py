"""Price checks at the door: the format of a quote, and whether it is a real book's price.

Prices keep the source's digits (`Decimal`); these checks only decide what to accept.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from domain.devig import booksum
from domain.prices import QuoteFormat, decimal_of_american
from ingest.memo import remember
from schemas.bounds import price_ok, price_problem

# a real book's market sums its implied probabilities to a little over 1 (measured on the
# samples: 1.0008 to 1.1752 for back markets); outside these bounds the quote is a placeholder
# (betfair's -5000/-5000 sums to 1.96) or broken
OVERROUND_MIN = Decimal("0.97")
OVERROUND_MAX = Decimal("1.35")


class BadPrice(ValueError):
    pass


def infer_format(prices: Sequence[Decimal]) -> QuoteFormat:
    """American or decimal, from the prices of one market.

    American prices are <= -100 or >= +100; decimal prices are > 1. A negative price is
    American; a price between 1 and 100 is decimal; a market whose prices are all >= 100 is
    American (no real decimal market has every outcome at 100 or longer)."""
    values = [_float(p) for p in prices if p.is_finite()]  # NaN and infinities: refused by check()
    if not values or min(values) < 0:
        return "american"
    for v in values:
        if 1.0 < v < 100.0:
            return "decimal"
    return "american"


# A feed repeats a few hundred distinct prices millions of times (-110 on most lines), and
# float() of a Decimal goes through its string (~0.7 us): the float of a finite price, and the
# implied probability a check sums, are kept per value. Both depend on the value alone (equal
# Decimals such as 1.9 and 1.90 give the same float), so the cache cannot change a result.
# Bounded: a hostile file of distinct prices empties it rather than growing it.
_CACHE_MAX = 4_096
_floats: dict[Decimal, float] = {}
_decimals: dict[tuple[Decimal, str], float] = {}


def _float(price: Decimal) -> float:
    """float(price) of a finite price (a signalling NaN cannot be hashed: never pass one)."""
    value = _floats.get(price)
    if value is None:
        value = remember(_floats, price, float(price), _CACHE_MAX)
    return value


def _decimal_of(price: Decimal, fmt: QuoteFormat) -> float:
    """The decimal odds of a price already within its bounds, in floats."""
    key = (price, fmt)
    value = _decimals.get(key)
    if value is None:
        x = _float(price)
        value = remember(_decimals, key, x if fmt == "decimal" else decimal_of_american(x), _CACHE_MAX)
    return value


def check(price: Decimal, fmt: QuoteFormat) -> None:
    """A finite price within the bounds of its format (schemas/bounds.py)."""
    problem = price_problem(price, fmt)
    if problem:
        raise BadPrice(problem)


def check_market(prices: Sequence[Decimal], fmt: QuoteFormat, exchange: bool) -> None:
    """Every price valid; a book's back market must sum to a plausible overround.
    Exchange lay markets are exempt (their implied probabilities sum below 1 by nature).
    (A check only, so in floats: the prices themselves stay exact.)"""
    for p in prices:
        if not price_ok(p, fmt):
            check(p, fmt)
    if exchange:
        return
    total = booksum([_decimal_of(p, fmt) for p in prices])
    if not _MIN <= total <= _MAX:
        raise BadPrice(
            f"implausible overround {total:.4f} (placeholder or broken prices {', '.join(str(p) for p in prices)})"
        )


_MIN, _MAX = float(OVERROUND_MIN), float(OVERROUND_MAX)
