"""Middles on spreads and totals: outcomes where both positions win, every scenario's profit."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from domain.exact import InvalidInput
from domain.middles import Position, grade, middle

F = Fraction
M110 = F(21, 11)  # -110


def test_total_middle():
    result = middle("total", Position("over", F(89, 2), M110, F(110)), Position("under", F(95, 2), M110, F(110)))
    assert result.is_middle and result.middle_outcomes == (45, 46, 47)
    assert result.profit_if_middle == 200 and result.worst_profit == -10
    assert [(s.low, s.high, s.grades) for s in result.scenarios] == [
        (0, 44, ("lose", "win")), (45, 47, ("win", "win")), (48, None, ("win", "lose"))]
    # break even when P(middle) * 200 + (1 - P) * (-10) = 0
    assert result.break_even_middle_probability == F(10, 210)


def test_spread_middle_with_pushes_at_whole_number_lines():
    # home +7 and away -3: home loses by 4 to 6 wins both; by 7 or 3 one side pushes
    result = middle("spread", Position("home", F(7), M110, F(110)), Position("away", F(-3), M110, F(110)))
    assert result.middle_outcomes == (-6, -5, -4)
    by_grades = {s.grades: (s.low, s.high, s.profit) for s in result.scenarios}
    assert by_grades[("push", "win")] == (-7, -7, F(100))
    assert by_grades[("win", "push")] == (-3, -3, F(100))
    assert result.scenarios[0].low is None and result.scenarios[-1].high is None


def test_no_middle_when_the_lines_cross():
    result = middle("total", Position("over", F(47), F(2), F(100)), Position("under", F(44), F(2), F(100)))
    assert not result.is_middle and result.middle_outcomes == () and result.profit_if_middle is None
    assert result.break_even_middle_probability is None
    assert ("lose", "lose") in {s.grades for s in result.scenarios}
    assert result.worst_profit == -200


@pytest.mark.parametrize("first, second, field", [
    (Position("over", F(44), M110, F(1)), Position("over", F(47), M110, F(1)), "positions[1].side"),
    (Position("home", F(44), M110, F(1)), Position("under", F(47), M110, F(1)), "positions[0].side"),
    (Position("over", F(177, 4), M110, F(1)), Position("under", F(47), M110, F(1)), "positions[0].line"),
    (Position("over", F(-3), M110, F(1)), Position("under", F(47), M110, F(1)), "positions[0].line"),
    (Position("over", F(44), M110, F(0)), Position("under", F(47), M110, F(1)), "positions[0].stake"),
    (Position("over", F(44), M110, F(1)), Position("under", F(2001), M110, F(1)), "positions[1].line"),
])
def test_bad_positions(first, second, field):
    with pytest.raises(InvalidInput) as info:
        middle("total", first, second)
    assert info.value.field == field


half_lines = st.integers(-60, 60).map(lambda n: F(n, 2))
prices = st.fractions(min_value=F(101, 100), max_value=F(10), max_denominator=100)
stakes = st.fractions(min_value=1, max_value=1000, max_denominator=100)


@settings(max_examples=100, deadline=None)
@given(half_lines, half_lines, prices, prices, stakes, stakes)
def test_spread_scenarios_cover_every_score_with_the_right_profit(h, a, d1, d2, s1, s2):
    first, second = Position("home", h, d1, s1), Position("away", a, d2, s2)
    result = middle("spread", first, second)
    # the middle exists exactly when the lines add up to more than zero
    assert result.is_middle == any(-h < x < a for x in range(-100, 101))
    for x in range(-40, 41):
        scenario = next(s for s in result.scenarios
                        if (s.low is None or s.low <= x) and (s.high is None or x <= s.high))
        grades = (grade(first, x), grade(second, x))
        assert scenario.grades == grades
        profit = sum((p.stake * (p.decimal_odds - 1) if g == "win" else 0 if g == "push" else -p.stake)
                     for p, g in zip((first, second), grades))
        assert scenario.profit == profit
        assert (x in result.middle_outcomes) == (grades == ("win", "win"))
