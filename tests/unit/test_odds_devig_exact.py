"""The API's devig: exact / 50-digit results, overround, hold, fair odds, warnings."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from domain.devig import METHODS, devig, devig_floats, hold, overround
from domain.exact import InvalidInput, round_half_even
from domain.prices import to_decimal

F = Fraction
decimal_odds = st.fractions(min_value=F(101, 100), max_value=F(101), max_denominator=1000)
markets = st.lists(decimal_odds, min_size=2, max_size=10)


@pytest.mark.parametrize("method", METHODS)
def test_minus_110_both_sides(method):
    result = devig(method, [to_decimal(-110, "american")] * 2)
    assert [round_half_even(p, 12) for p in result.probabilities] == [F(1, 2), F(1, 2)]
    assert result.overround == F(1, 21)  # 22/21 - 1, exactly
    assert result.hold == F(1, 22)  # 1 - 21/22, exactly
    assert str(round_half_even(result.overround, 6)) == "0.047619"
    assert str(round_half_even(result.hold, 6)) == "0.045455"
    assert result.in_range and result.converged and result.messages == ()


def test_multiplicative_and_additive_are_exact_rationals():
    odds = [F(21, 10), F(34, 10), F(36, 10)]
    implied = [1 / d for d in odds]
    total = sum(implied)
    assert devig("multiplicative", odds).probabilities == tuple(p / total for p in implied)
    share = (total - 1) / 3
    result = devig("additive", odds)
    assert result.parameter == share
    assert result.probabilities == tuple(p - share for p in implied)
    assert sum(result.probabilities) == 1


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(METHODS), markets)
def test_probabilities_sum_to_one_far_below_the_contract(method, odds):
    result = devig(method, odds)
    assert result.converged
    assert abs(sum(result.probabilities) - 1) < F(1, 10**30)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(METHODS), markets)
def test_agrees_with_the_float_hot_path(method, odds):
    exact_result = devig(method, odds)
    float_result = devig_floats(method, [float(d) for d in odds])
    assert [float(p) for p in exact_result.probabilities] == pytest.approx(float_result.probabilities, abs=1e-11)
    if float_result.parameter is not None:
        assert float(exact_result.parameter) == pytest.approx(float_result.parameter, rel=1e-9, abs=1e-12)


@settings(max_examples=80, deadline=None)
@given(markets)
def test_overround_and_hold_definitions(odds):
    total = sum(1 / d for d in odds)
    assert overround(odds) == total - 1
    assert hold(odds) == 1 - 1 / total
    # hold is the overround as a share of the booksum
    assert hold(odds) == overround(odds) / (1 + overround(odds))


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(METHODS), markets)
def test_fair_odds_are_inverse_probabilities(method, odds):
    result = devig(method, odds)
    for p, fair in zip(result.probabilities, result.fair_odds):
        if 0 < p < 1:
            assert fair == 1 / p
        else:
            assert fair is None


def test_out_of_range_is_flagged_and_explained():
    result = devig("additive", [F(5, 4), F(19, 10), F(50)])
    assert not result.in_range
    assert result.probabilities[2] < 0
    assert result.fair_odds[2] is None
    assert any("outcome 3 (odds[2])" in m and "outside (0, 1)" in m for m in result.messages)


def test_prices_without_margin_are_explained():
    result = devig("shin", [F(21, 10), F(21, 10)])
    assert result.overround < 0
    assert any("less than 1" in m for m in result.messages)
    assert any("Shin's z is negative" in m for m in result.messages)
    assert result.parameter < 0


@pytest.mark.parametrize("method", METHODS)
def test_no_margin_gives_back_the_implied_probabilities(method):
    odds = [F(2), F(4), F(4)]  # 1/2 + 1/4 + 1/4 = 1
    result = devig(method, odds)
    assert [float(p) for p in result.probabilities] == pytest.approx([0.5, 0.25, 0.25], abs=1e-30)


def test_bad_inputs():
    with pytest.raises(InvalidInput) as info:
        devig("magic", [F(2), F(2)])
    assert info.value.field == "method"
    with pytest.raises(InvalidInput) as info:
        devig("shin", [F(2)])
    assert info.value.field == "odds"
    with pytest.raises(InvalidInput) as info:
        devig("power", [F(2), F(1)])
    assert info.value.field == "odds[1]"


@pytest.mark.parametrize("method", ["power", "shin", "odds_ratio"])
def test_parameter_solves_its_equation(method):
    odds = [F(27, 10), F(23, 10), F(44, 10)]
    result = devig(method, odds)
    implied = [1 / d for d in odds]
    total = sum(implied)
    p, x = [float(q) for q in result.probabilities], float(result.parameter)
    for pi, q in zip(implied, p):
        pi = float(pi)
        if method == "power":
            assert q == pytest.approx(pi ** x, rel=1e-12)
        elif method == "odds_ratio":
            assert q / (1 - q) == pytest.approx(pi / (1 - pi) / x, rel=1e-12)
        else:
            assert math.sqrt(float(total) * (x * q + (1 - x) * q * q)) == pytest.approx(pi, rel=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_extreme_markets_answer_quickly(method):
    """Power's k reaches millions when one price is 1.000001: the tiny probabilities it gives must
    not become million-digit rationals (a request that never ends)."""
    import time

    for odds in ([F(1000001, 1000000)] * 100, [F(1000001, 1000000)] + [F(1000001)] * 99,
                 [F(1000001, 1000000), F(1000001, 1000000), F(31, 10)], [F(1000001)] * 2):
        started = time.perf_counter()
        result = devig(method, odds)
        assert time.perf_counter() - started < 0.5
        assert result.converged
        assert abs(sum(result.probabilities) - 1) <= F(1, 10**12)
        if method in ("power", "shin", "odds_ratio"):
            assert result.in_range  # positive by construction, however small
