"""Price formats: exact reading of numbers, conversions, refusals, display rounding."""

from __future__ import annotations

import time
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from domain import prices
from domain.exact import InvalidInput, exact, round_half_even, to_float

F = Fraction


# --- reading numbers exactly ----------------------------------------------------------------------

@pytest.mark.parametrize("value, expected", [
    (1.1, F(11, 10)),  # a float is read by its decimal text, not its binary value
    (0.1, F(1, 10)),
    (-110, F(-110)),
    ("10/11", F(10, 11)),
    ("+150", F(150)),
    ("1.909", F(1909, 1000)),
    (".5", F(1, 2)),
    ("2.", F(2)),
    ("1e3", F(1000)),
    ("evens", F(1)),
    ("EVS", F(1)),
    (" 2.5 ", F(5, 2)),
    ("-3/-4", F(3, 4)),
    (Decimal("1.05"), F(21, 20)),
])
def test_exact_reads_numbers_as_written(value, expected):
    assert exact(value) == expected


@pytest.mark.parametrize("value", ["abc", "nan", "NaN", "inf", "1/0", "1,5", "", "1e999999999", "1" * 65, True, None, [1]])
def test_exact_refuses_what_is_not_a_number(value):
    with pytest.raises(InvalidInput) as info:
        exact(value, "stake")
    assert info.value.field == "stake"


def test_exact_refuses_huge_exponents_without_building_them():
    started = time.perf_counter()
    for text in ("1e999", "9" * 30 + "e999", "1e-999"):
        with pytest.raises(InvalidInput):
            exact(text)
    with pytest.raises(InvalidInput):
        exact(Decimal("1e999999999"))
    assert time.perf_counter() - started < 0.1


def test_round_half_even_is_exact_at_ties():
    assert round_half_even(F(5, 2), 0) == Decimal("2")
    assert round_half_even(F(7, 2), 0) == Decimal("4")
    assert round_half_even(F(-5, 2), 0) == Decimal("-2")
    assert round_half_even(F(1, 8), 2) == Decimal("0.12")  # 0.125 -> 0.12 (even)
    assert round_half_even(F(3, 8), 2) == Decimal("0.38")  # 0.375 -> 0.38 (even)
    assert round_half_even(F(1, 3), 12) == Decimal("0.333333333333")
    assert to_float(F(22, 21) - 1, 6) == 0.047619


@settings(max_examples=300, deadline=None)
@given(st.fractions(min_value=-10**6, max_value=10**6, max_denominator=10**6), st.integers(0, 15))
def test_round_half_even_is_within_half_a_unit(x, places):
    rounded = Fraction(round_half_even(x, places))
    assert abs(rounded - x) <= F(1, 2 * 10**places)


# --- conversions ----------------------------------------------------------------------------------

@pytest.mark.parametrize("value, fmt, decimal", [
    (-110, "american", F(21, 11)),
    (+150, "american", F(5, 2)),
    (100, "american", F(2)),
    (-100, "american", F(2)),
    (-250, "american", F(7, 5)),
    ("10/11", "fractional", F(21, 11)),
    ("5/2", "fractional", F(7, 2)),
    ("evens", "fractional", F(2)),
    (1.91, "decimal", F(191, 100)),
    (0.5, "implied", F(2)),
    ("1/3", "implied", F(3)),
])
def test_to_decimal(value, fmt, decimal):
    assert prices.to_decimal(value, fmt) == decimal


def test_convert_minus_110_in_every_format():
    price = prices.convert(-110, "american")
    assert price == prices.Price(F(21, 11), F(-110), F(10, 11), F(11, 21))
    assert prices.display(price) == {"decimal": "1.91", "american": "-110", "fractional": "10/11", "implied": "52.38%"}


def test_display_of_plus_money_and_evens():
    assert prices.display(prices.convert("5/2", "fractional")) == {
        "decimal": "3.50", "american": "+250", "fractional": "5/2", "implied": "28.57%"}
    assert prices.display(prices.convert(2.0))["american"] == "+100"


@pytest.mark.parametrize("value, fmt, words", [
    (-99, "american", "American odds"),
    (50, "american", "American odds"),
    (0, "american", "American odds"),
    (1, "decimal", "above 1"),
    (0.95, "decimal", "above 1"),
    (-2, "decimal", "above 1"),
    ("0/5", "fractional", "above zero"),
    ("-1/2", "fractional", "above zero"),
    (0, "implied", "between 0 and 1"),
    (1, "implied", "between 0 and 1"),
    (1.0000001, "decimal", "supported range"),
    (2_000_000, "decimal", "supported range"),
])
def test_invalid_prices_are_refused_naming_the_field(value, fmt, words):
    with pytest.raises(InvalidInput) as info:
        prices.to_decimal(value, fmt, "odds[1]")
    assert info.value.field == "odds[1]"
    assert words in info.value.message


decimal_odds = st.fractions(min_value=prices.MIN_DECIMAL_ODDS, max_value=prices.MAX_DECIMAL_ODDS,
                            max_denominator=10**9).filter(lambda d: d > 1)


@settings(max_examples=150, deadline=None)
@given(decimal_odds)
def test_round_trips_are_exact(d):
    price = prices.from_decimal(d)
    assert prices.to_decimal(price.american, "american") == d
    assert prices.to_decimal(price.fractional, "fractional") == d
    assert prices.to_decimal(price.implied, "implied") == d
    assert prices.to_decimal(prices.fraction_text(price.fractional), "fractional") == d


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.integers(100, 10**7), st.integers(-10**7, -101)))
def test_american_round_trips_exactly(a):
    assert prices.american(prices.to_decimal(a, "american")) == a


def test_minus_100_and_plus_100_are_the_same_price_written_plus():
    assert prices.american(prices.to_decimal(-100, "american")) == 100


@settings(max_examples=200, deadline=None)
@given(st.decimals(min_value=Decimal("1.000001"), max_value=Decimal("1000"), places=6))
def test_decimal_text_round_trips(value):
    d = prices.to_decimal(str(value))
    assert Fraction(value) == d
    assert prices.to_decimal(prices.fraction_text(prices.fractional(d)), "fractional") == d


# --- the one list of formats ----------------------------------------------------------------------


def test_each_format_set_extends_the_one_before_and_the_answers_read_the_same_list():
    import typing

    from api.answers import understand

    assert typing.get_args(prices.QuoteFormat) == prices.QUOTE_FORMATS == ("decimal", "american")
    assert typing.get_args(prices.OddsFormat) == (*prices.QUOTE_FORMATS, "fractional")
    assert prices.PRICE_FORMATS == (*typing.get_args(prices.OddsFormat), "implied")
    # the answers read a price as written in an odds format, and convert to any price format
    hints = typing.get_type_hints(understand.PriceMention)
    assert hints["format"] == prices.OddsFormat
    assert typing.get_type_hints(understand.Reading)["target_format"] == prices.PriceFormat | None
    assert not hasattr(understand, "PriceFormat") or understand.PriceFormat is prices.PriceFormat


# --- implied probability and fair odds: one reciprocal each, in every number type ------------------

@given(st.fractions(min_value=F(1, 1000), max_value=F(999, 1000)))
def test_fair_odds_and_implied_probability_undo_each_other_in_every_number_type(p):
    d = prices.fair_odds(p)
    assert d > 1 and prices.implied(d) == p  # exact in fractions
    assert prices.convert(d).implied == p  # the converted price's implied probability is the same rule
    as_float = prices.implied(prices.fair_odds(float(p)))
    assert isinstance(as_float, float) and as_float == pytest.approx(float(p), rel=1e-15)
    as_decimal = prices.implied(prices.fair_odds(Decimal(p.numerator) / Decimal(p.denominator)))
    assert isinstance(as_decimal, Decimal)
