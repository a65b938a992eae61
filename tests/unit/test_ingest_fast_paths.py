"""Ingest's hot-path shortcuts answer exactly as the plain rules they stand for.

Each shortcut (a cache, a fast accept in front of a full check) is compared here with the plain
rule written out the straightforward way, on values hypothesis picks to be awkward: equal
numbers written differently (1.9 and 1.90), non-finite and huge values, prices at the bounds.
"""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from domain.prices import decimal_of_american
from ingest import prices
from schemas.bounds import price_problem

# prices as a feed writes them: usual lines, the bounds, the same value with more digits,
# and hostile values (NaN, infinities, huge and tiny exponents)
_usual = st.sampled_from(["-110", "-105", "150", "-238", "10900", "1.91", "1.9", "1.90", "2.5", "1.0", "1", "100",
                          "-100", "-99", "1000000", "1000001", "10001", "10001.0", "1.0000000000000000000001",
                          "-0.0000000000000000000000000000000001", "NaN", "Infinity", "-Infinity", "1E+5",
                          "100000.00000000000000000000000000000000000", "-5000"])
_prices = st.one_of(
    _usual.map(Decimal),
    st.decimals(allow_nan=False, allow_infinity=False, places=3, min_value=-20_000, max_value=20_000),
    st.decimals(allow_nan=True, allow_infinity=True),
)


def _plain_infer_format(values: list[Decimal]) -> str:
    floats = [float(p) for p in values if p.is_finite()]
    if not floats or min(floats) < 0:
        return "american"
    return "decimal" if any(1.0 < v < 100.0 for v in floats) else "american"


def _plain_check_market(values: list[Decimal], fmt: str, exchange: bool) -> str | None:
    for p in values:
        if problem := price_problem(p, fmt):
            return problem
    if exchange:
        return None
    total = 0.0
    for p in values:
        x = float(p)
        total += 1.0 / (x if fmt == "decimal" else decimal_of_american(x))
    if not float(prices.OVERROUND_MIN) <= total <= float(prices.OVERROUND_MAX):
        return f"implausible overround {total:.4f} (placeholder or broken prices {', '.join(str(p) for p in values)})"
    return None


def _check_market(values: list[Decimal], fmt: str, exchange: bool) -> str | None:
    try:
        prices.check_market(values, fmt, exchange=exchange)  # type: ignore[arg-type]
    except prices.BadPrice as exc:
        return str(exc)
    return None


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(_prices, min_size=1, max_size=4), min_size=1, max_size=6),
       st.sampled_from(["american", "decimal"]), st.booleans())
def test_cached_price_checks_answer_as_the_plain_rule(markets, fmt, exchange):
    # several markets in a row: later ones meet values the caches already hold
    for values in markets:
        assert prices.infer_format(values) == _plain_infer_format(values)
        assert _check_market(values, fmt, exchange) == _plain_check_market(values, fmt, exchange)


def test_the_price_caches_stay_bounded():
    # a hostile file of distinct prices: the caches are emptied, never grown past their bound
    for i in range(3 * prices._CACHE_MAX):
        prices.infer_format([Decimal(i) + Decimal("0.5")])
        prices._implied_of(Decimal(100 + i), "american")
    assert 0 < len(prices._floats) <= prices._CACHE_MAX and 0 < len(prices._implied) <= prices._CACHE_MAX
