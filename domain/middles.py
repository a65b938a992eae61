"""Middles: two opposite positions on one spread or total, and the results where both win.

Scores are whole numbers, so every outcome is an integer x: the home margin (home minus away
points) for a spread, the points scored for a total. A position's line is added to its own side:

- spread, home line h: wins when x + h > 0, pushes at 0;  away line a: wins when a - x > 0
- total, over line o: wins when x - o > 0;                under line u: wins when u - x > 0

The outcomes are grouped into contiguous integer ranges with the same grades, each with the
combined profit, so the caller sees every scenario (middle, one side, pushes, both losing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from domain.bets import check_stake
from domain.exact import InvalidInput

MiddleKind = Literal["spread", "total"]
Side = Literal["home", "away", "over", "under"]
Grade = Literal["win", "push", "lose"]
SIDES: dict[str, tuple[str, str]] = {"spread": ("home", "away"), "total": ("over", "under")}
MAX_LINE = 1000


@dataclass(frozen=True)
class Position:
    side: Side
    line: Fraction
    decimal_odds: Fraction
    stake: Fraction


@dataclass(frozen=True)
class Scenario:
    low: int | None  # lowest outcome of the range; None: unbounded below
    high: int | None  # highest outcome of the range; None: unbounded above
    grades: tuple[Grade, Grade]
    profit: Fraction


@dataclass(frozen=True)
class Middle:
    is_middle: bool  # some outcome wins both positions
    middle_outcomes: tuple[int, ...]  # the outcomes where both win
    scenarios: tuple[Scenario, ...]
    profit_if_middle: Fraction | None
    worst_profit: Fraction
    # chance of landing in the middle that makes the pair break even, assuming every other outcome
    # gives the worst profit: -worst / (middle - worst)
    break_even_middle_probability: Fraction | None


def _margin(position: Position, x: int) -> Fraction:
    """Positive when the position wins at outcome x, zero when it pushes."""
    if position.side == "home":
        return x + position.line
    if position.side == "over":
        return x - position.line
    return position.line - x  # away, under


def grade(position: Position, x: int) -> Grade:
    value = _margin(position, x)
    return "win" if value > 0 else "push" if value == 0 else "lose"


def _profit(position: Position, result: Grade) -> Fraction:
    if result == "win":
        return position.stake * (position.decimal_odds - 1)
    return Fraction(0) if result == "push" else -position.stake


def _check(kind: MiddleKind, first: Position, second: Position) -> None:
    if kind not in SIDES:
        raise InvalidInput("kind", "must be spread or total")
    for i, position in enumerate((first, second)):
        if position.side not in SIDES[kind]:
            raise InvalidInput(f"positions[{i}].side", f"a {kind} position is {' or '.join(SIDES[kind])}")
        if (position.line * 2).denominator != 1 or abs(position.line) > MAX_LINE:
            raise InvalidInput(
                f"positions[{i}].line", "a line is a whole or half point between -1000 and 1000 "
                "(quarter lines are two bets: send each half separately)",
            )
        if kind == "total" and position.line < 0:
            raise InvalidInput(f"positions[{i}].line", "a total line cannot be negative")
        check_stake(position.stake, f"positions[{i}].stake")
    if first.side == second.side:
        raise InvalidInput("positions[1].side", "a middle needs the two opposite sides")


def middle(kind: MiddleKind, first: Position, second: Position) -> Middle:
    _check(kind, first, second)
    # where a grade can change: x = -h (home), a (away), o (over), u (under)
    edges = [-p.line if p.side == "home" else p.line for p in (first, second)]
    start = math.floor(min(edges)) - 1
    stop = math.ceil(max(edges)) + 1
    if kind == "total":
        start = max(start, 0)  # no negative scores
    scenarios: list[Scenario] = []
    both: list[int] = []
    for x in range(start, stop + 1):
        grades = (grade(first, x), grade(second, x))
        if grades == ("win", "win"):
            both.append(x)
        profit = _profit(first, grades[0]) + _profit(second, grades[1])
        if scenarios and scenarios[-1].grades == grades:
            scenarios[-1] = Scenario(scenarios[-1].low, x, grades, profit)
        else:
            scenarios.append(Scenario(x, x, grades, profit))
    # the outer ranges go on for ever (totals stop at zero below)
    head, tail = scenarios[0], scenarios[-1]
    scenarios[0] = Scenario(0 if kind == "total" else None, head.high, head.grades, head.profit)
    scenarios[-1] = Scenario(scenarios[-1].low, None, tail.grades, tail.profit)
    middle_profit = _profit(first, "win") + _profit(second, "win") if both else None
    others = [s.profit for s in scenarios if s.grades != ("win", "win")]
    worst = min(s.profit for s in scenarios)
    break_even = None
    if middle_profit is not None and others and min(others) < 0 < middle_profit:
        break_even = -min(others) / (middle_profit - min(others))
    return Middle(bool(both), tuple(both), tuple(scenarios), middle_profit, worst, break_even)

