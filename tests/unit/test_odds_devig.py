"""Margin removal on floats (the projector's hot path): properties and hand-derived cases."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings, strategies as st

from domain.devig import DEFAULT_METHOD, METHODS, FloatDevig, devig_floats

# decimal prices from 1.01 to 101: what books actually quote, with margins from about -50 % up
prices = st.floats(min_value=1.01, max_value=101.0, allow_nan=False, allow_infinity=False)
markets = st.lists(prices, min_size=2, max_size=12)
methods = st.sampled_from(METHODS)


def american(a: float) -> float:
    return 1 + (a / 100 if a > 0 else 100 / -a)


def test_contract_shape():
    assert set(METHODS) == {"multiplicative", "additive", "power", "shin", "odds_ratio"}
    assert DEFAULT_METHOD in METHODS
    result = devig_floats("multiplicative", [2.0, 2.0])
    assert isinstance(result, FloatDevig)
    assert result.probabilities == (0.5, 0.5) and result.parameter is None
    assert result.in_range and result.converged


@pytest.mark.parametrize("method", METHODS)
def test_minus_110_both_sides_is_a_coin_flip(method):
    result = devig_floats(method, [american(-110), american(-110)])
    assert result.probabilities == pytest.approx((0.5, 0.5), abs=1e-12)
    assert result.converged and result.in_range


def test_parameters_on_a_symmetric_market():
    # -110/-110: pi = 11/21 each, S = 22/21; each parameter has a closed form here
    implied = 11 / 21
    assert devig_floats("additive", [american(-110)] * 2).parameter == pytest.approx((22 / 21 - 1) / 2)
    assert devig_floats("power", [american(-110)] * 2).parameter == pytest.approx(math.log(0.5) / math.log(implied))
    # odds ratio: (1/2)/(1/2) = (pi/(1-pi))/c  =>  c = pi / (1 - pi) = 11/10
    assert devig_floats("odds_ratio", [american(-110)] * 2).parameter == pytest.approx(1.1)
    # Shin, two equal outcomes: z = S - 1 ... solve (sqrt(z^2 + 4(1-z) pi^2/S) - z) / (2(1-z)) = 1/2
    z = devig_floats("shin", [american(-110)] * 2).parameter
    assert (math.sqrt(z * z + 4 * (1 - z) * implied**2 / (22 / 21)) - z) / (2 * (1 - z)) == pytest.approx(0.5)


@settings(max_examples=300, deadline=None)
@given(methods, markets)
def test_probabilities_sum_to_one_and_solvers_converge(method, odds):
    result = devig_floats(method, odds)
    assert result.converged
    assert math.fsum(result.probabilities) == pytest.approx(1.0, abs=1e-11)
    assert len(result.probabilities) == len(odds)


@settings(max_examples=300, deadline=None)
@given(methods, markets)
def test_order_is_preserved(method, odds):
    """A shorter price never gets a lower fair probability; reversing the input reverses the output."""
    result = devig_floats(method, odds)
    for i in range(len(odds)):
        for j in range(len(odds)):
            if odds[i] < odds[j]:
                assert result.probabilities[i] >= result.probabilities[j] - 1e-12
    reversed_result = devig_floats(method, list(reversed(odds)))
    assert reversed_result.probabilities == pytest.approx(tuple(reversed(result.probabilities)), abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(methods, st.lists(st.floats(min_value=0.01, max_value=1.0), min_size=2, max_size=10))
def test_all_methods_agree_on_a_market_with_no_margin(method, weights):
    fair = [w / math.fsum(weights) for w in weights]
    if max(fair) >= 0.999:
        return  # price would be <= 1.001: outside what the strategy is about
    odds = [1 / p for p in fair]
    result = devig_floats(method, odds)
    assert result.probabilities == pytest.approx(tuple(fair), abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(methods, markets)
def test_in_range_flag_matches_the_probabilities(method, odds):
    result = devig_floats(method, odds)
    assert result.in_range == all(0 < p < 1 for p in result.probabilities)


def test_additive_can_leave_the_unit_interval_and_says_so():
    # a long shot at 50.0 beside two short prices: the equal share exceeds its implied 0.02
    result = devig_floats("additive", [1.25, 1.9, 50.0])
    assert not result.in_range
    assert result.probabilities[2] < 0


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.lists(prices, min_size=2, max_size=2), markets))
def test_shin_solves_the_shin_equation(odds):
    """Shin's model inverted: pi_i = sqrt(S (z p_i + (1 - z) p_i^2)); two outcomes use the closed form."""
    result = devig_floats("shin", odds)
    implied = [1 / d for d in odds]
    total = sum(implied)
    z = result.parameter
    for p, pi in zip(result.probabilities, implied):
        assert math.sqrt(total * (z * p + (1 - z) * p * p)) == pytest.approx(pi, rel=1e-9)
    assert math.fsum(result.probabilities) == pytest.approx(1.0, abs=1e-11)


@pytest.mark.parametrize("bad", [[2.0], [], [1.0, 2.0], [0.5, 3.0], [float("nan"), 2.0], [float("inf"), 2.0], [-2.0, 2.0]])
def test_bad_prices_are_refused(bad):
    with pytest.raises(ValueError):
        devig_floats("multiplicative", bad)


def test_unknown_method_is_refused():
    with pytest.raises(ValueError, match="unknown devig method"):
        devig_floats("magic", [2.0, 2.0])


@pytest.mark.parametrize("method", METHODS)
def test_extreme_but_valid_markets_converge(method):
    for odds in ([1.0001, 5000.0], [1.01] * 12, [101.0] * 2, [1.5, 1.5, 1.5], [1.001, 1000.0, 1000.0]):
        result = devig_floats(method, odds)
        assert result.converged, (method, odds)
        assert math.fsum(result.probabilities) == pytest.approx(1.0, abs=1e-11)
