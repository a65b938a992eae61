"""Bet maths: payout, parlay, EV, Kelly, arbitrage, closing-line value."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from domain import bets
from domain.exact import InvalidInput

F = Fraction
odds = st.fractions(min_value=F(101, 100), max_value=F(1000), max_denominator=1000)
probability = st.fractions(min_value=0, max_value=1, max_denominator=10**6)
stake = st.fractions(min_value=F(1, 100), max_value=F(10**6), max_denominator=100)


def test_payout_at_minus_110():
    result = bets.payout(F(110), F(21, 11))  # -110: stake 110 to win 100
    assert result.payout == 210 and result.profit == 100
    assert result.break_even_probability == F(11, 21)


@settings(max_examples=200, deadline=None)
@given(stake, odds)
def test_payout_is_stake_plus_profit(s, d):
    result = bets.payout(s, d)
    assert result.payout == s + result.profit
    assert result.break_even_probability * d == 1


@pytest.mark.parametrize("bad", [F(0), F(-1), F(10**12 + 1)])
def test_bad_stakes_are_refused(bad):
    with pytest.raises(InvalidInput) as info:
        bets.payout(bad, F(2))
    assert info.value.field == "stake"


def test_parlay_drops_pushed_and_void_legs():
    legs = [(F(21, 11), "open"), (F(5, 2), "won"), (F(3, 2), "push"), (F(4), "void")]
    result = bets.parlay(legs, F(10))
    assert result.decimal_odds == F(21, 11) * F(5, 2)
    assert result.legs_counted == (0, 1) and result.legs_removed == (2, 3)
    assert result.payout == 10 * F(21, 11) * F(5, 2)
    assert not result.lost


def test_parlay_with_every_leg_void_returns_the_stake():
    result = bets.parlay([(F(2), "void"), (F(3), "push")], F(25))
    assert result.decimal_odds == 1 and result.payout == 25 and result.profit == 0


def test_parlay_with_a_lost_leg_pays_nothing():
    result = bets.parlay([(F(2), "won"), (F(3), "lost"), (F(5), "push")], F(10))
    assert result.lost and result.payout == 0 and result.profit == -10


def test_parlay_needs_two_legs_and_known_statuses():
    with pytest.raises(InvalidInput) as info:
        bets.parlay([(F(2), "open")], F(1))
    assert info.value.field == "legs"
    with pytest.raises(InvalidInput) as info:
        bets.parlay([(F(2), "open"), (F(2), "maybe")], F(1))
    assert info.value.field == "legs[1].status"


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(odds, st.sampled_from(["open", "won", "push", "void"])), min_size=2, max_size=8), stake)
def test_parlay_equals_the_product_of_counting_legs(legs, s):
    result = bets.parlay(legs, s)
    product = F(1)
    for d, status in legs:
        if status in ("open", "won"):
            product *= d
    assert result.decimal_odds == product and result.payout == s * product
    assert sorted(result.legs_counted + result.legs_removed) == list(range(len(legs)))


def test_expected_value():
    result = bets.expected_value(F(21, 10), F(52, 100), F(100))
    assert result.edge == F(52, 100) * F(21, 10) - 1
    assert result.expected_value == 100 * result.edge
    assert result.probability_edge == F(52, 100) - F(10, 21)
    assert result.fair_odds == F(100, 52)
    assert bets.expected_value(F(2), F(0)).fair_odds is None


@settings(max_examples=200, deadline=None)
@given(odds, probability)
def test_expected_value_is_the_average_over_win_and_loss(d, p):
    result = bets.expected_value(d, p)
    assert result.expected_value == p * (d - 1) - (1 - p)
    assert (result.edge > 0) == (result.probability_edge > 0)


@settings(max_examples=150, deadline=None)
@given(odds, st.fractions(min_value=F(1, 100), max_value=1, max_denominator=100),
       st.fractions(min_value=F(1, 100), max_value=1, max_denominator=100))
def test_kelly_is_zero_at_no_edge(d, multiplier, cap):
    result = bets.kelly(d, 1 / d, multiplier, cap, F(1000))
    assert result.full_fraction == 0 and result.stake_fraction == 0 and result.stake == 0
    assert result.edge == 0


@settings(max_examples=150, deadline=None)
@given(odds, probability, st.fractions(min_value=F(1, 100), max_value=1, max_denominator=100),
       st.fractions(min_value=F(1, 100), max_value=1, max_denominator=100))
def test_kelly_scales_clamps_and_caps(d, p, multiplier, cap):
    result = bets.kelly(d, p, multiplier, cap)
    assert result.full_fraction == (p * d - 1) / (d - 1)
    assert 0 <= result.stake_fraction <= cap
    assert result.stake_fraction == min(cap, max(F(0), result.full_fraction * multiplier))
    assert result.capped == (result.full_fraction * multiplier > cap)
    assert result.stake is None


def test_kelly_maximises_expected_log_growth():
    """Kelly's defining property, checked numerically: nearby stakes grow the bankroll more slowly."""
    import math

    d, p = F(21, 10), F(55, 100)
    f = float(bets.kelly(d, p).full_fraction)

    def growth(x: float) -> float:
        return float(p) * math.log(1 + x * (float(d) - 1)) + (1 - float(p)) * math.log(1 - x)

    assert growth(f) > growth(f - 0.01) and growth(f) > growth(f + 0.01)


def test_kelly_refuses_bad_settings():
    for kwargs, field in (({"multiplier": F(0)}, "fraction"), ({"multiplier": F(2)}, "fraction"),
                          ({"cap": F(0)}, "cap"), ({"bankroll": F(-5)}, "bankroll")):
        with pytest.raises(InvalidInput) as info:
            bets.kelly(F(2), F(1, 2), **kwargs)
        assert info.value.field == field
    with pytest.raises(InvalidInput) as info:
        bets.kelly(F(2), F(3, 2))
    assert info.value.field == "probability"


@settings(max_examples=100, deadline=None)
@given(st.lists(odds, min_size=2, max_size=8), stake)
def test_arbitrage_stakes_pay_the_same_on_every_outcome(prices, total):
    result = bets.arbitrage(prices, total)
    assert sum(result.stakes) == total
    assert {s * d for s, d in zip(result.stakes, prices)} == {result.payout}
    assert result.is_arbitrage == (result.profit > 0) == (sum(1 / d for d in prices) < 1)
    assert result.roi == result.profit / total


def test_arbitrage_example():
    result = bets.arbitrage([F(212, 100), F(195, 100)], F(100))
    assert result.is_arbitrage
    assert result.booksum == F(100, 212) + F(100, 195)
    assert result.payout == 100 / result.booksum


def test_closing_line_value():
    result = bets.closing_line_value(F(21, 10), F(1, 2))
    assert result.clv == F(1, 20) and result.beat_close
    assert result.closing_fair_odds == 2
    assert result.probability_edge == F(1, 2) - F(10, 21)
    worse = bets.closing_line_value(F(19, 10), F(1, 2))
    assert worse.clv < 0 and not worse.beat_close
    with pytest.raises(InvalidInput):
        bets.closing_line_value(F(2), F(1))


@settings(max_examples=200, deadline=None)
@given(odds, st.fractions(min_value=F(1, 1000), max_value=F(999, 1000), max_denominator=1000))
def test_clv_is_zero_exactly_at_the_closing_fair_price(d, p):
    assert bets.closing_line_value(1 / p, p).clv == 0
    assert (bets.closing_line_value(d, p).clv > 0) == (d > 1 / p)
