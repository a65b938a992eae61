"""Bet maths on exact decimal odds d: payout, parlay, break-even, expected value and edge, Kelly,
arbitrage and closing-line value. Every value is an exact rational; callers round for display.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, Sequence

from domain.exact import InvalidInput

LegStatus = Literal["open", "won", "lost", "push", "void"]
LEG_STATUSES: tuple[LegStatus, ...] = ("open", "won", "lost", "push", "void")
MAX_STAKE = Fraction(10**12)


def check_stake(stake: Fraction, field: str = "stake") -> Fraction:
    if not 0 < stake <= MAX_STAKE:
        raise InvalidInput(field, "must be above 0 and at most 1e12")
    return stake


def check_probability(p: Fraction, field: str = "probability") -> Fraction:
    if not 0 <= p <= 1:
        raise InvalidInput(field, "a probability must be between 0 and 1")
    return p


def break_even(d: Fraction) -> Fraction:
    """The win probability at which a bet at d neither wins nor loses on average: 1/d."""
    return 1 / d


@dataclass(frozen=True)
class Payout:
    payout: Fraction  # returned on a win, stake included: stake * d
    profit: Fraction  # stake * (d - 1)
    break_even_probability: Fraction


def payout(stake: Fraction, d: Fraction) -> Payout:
    check_stake(stake)
    return Payout(stake * d, stake * (d - 1), break_even(d))


@dataclass(frozen=True)
class Parlay:
    decimal_odds: Fraction  # product of the legs that count; 1 when none counts (stake returned)
    legs_counted: tuple[int, ...]
    legs_removed: tuple[int, ...]  # pushed or void: they drop out, as most house rules settle them
    lost: bool
    payout: Fraction  # 0 when a leg lost
    profit: Fraction


def parlay(legs: Sequence[tuple[Fraction, LegStatus]], stake: Fraction) -> Parlay:
    check_stake(stake)
    if len(legs) < 2:
        raise InvalidInput("legs", "a parlay needs at least two legs")
    price = Fraction(1)
    counted, removed = [], []
    lost = False
    for i, (d, status) in enumerate(legs):
        if status not in LEG_STATUSES:
            raise InvalidInput(f"legs[{i}].status", f"unknown leg status {status!r}")
        if status in ("push", "void"):
            removed.append(i)
            continue
        counted.append(i)
        price *= d
        lost = lost or status == "lost"
    paid = Fraction(0) if lost else stake * price
    return Parlay(price, tuple(counted), tuple(removed), lost, paid, paid - stake)


@dataclass(frozen=True)
class ExpectedValue:
    expected_value: Fraction  # money: stake * (p d - 1)
    edge: Fraction  # per unit staked: p d - 1
    probability_edge: Fraction  # p - 1/d
    break_even_probability: Fraction
    fair_odds: Fraction | None  # 1/p, none when p = 0


def expected_value(d: Fraction, p: Fraction, stake: Fraction = Fraction(1)) -> ExpectedValue:
    check_probability(p)
    check_stake(stake)
    edge = p * d - 1
    return ExpectedValue(stake * edge, edge, p - 1 / d, break_even(d), 1 / p if p else None)


@dataclass(frozen=True)
class Kelly:
    full_fraction: Fraction  # f* = (p d - 1) / (d - 1); negative means the bet loses on average
    stake_fraction: Fraction  # share of bankroll to stake: max(0, f* x multiplier), capped
    capped: bool
    stake: Fraction | None  # bankroll * stake_fraction, when a bankroll is given
    edge: Fraction


def kelly(d: Fraction, p: Fraction, multiplier: Fraction = Fraction(1), cap: Fraction = Fraction(1),
          bankroll: Fraction | None = None) -> Kelly:
    """Kelly's growth-optimal share of bankroll for one bet, scaled (fractional Kelly) and capped."""
    check_probability(p)
    if not 0 < multiplier <= 1:
        raise InvalidInput("fraction", "the Kelly fraction must be above 0 and at most 1")
    if not 0 < cap <= 1:
        raise InvalidInput("cap", "the cap must be a share of bankroll above 0 and at most 1")
    if bankroll is not None:
        check_stake(bankroll, "bankroll")
    edge = p * d - 1
    full = edge / (d - 1)
    wanted = max(Fraction(0), full * multiplier)
    share = min(wanted, cap)
    return Kelly(full, share, wanted > cap, None if bankroll is None else bankroll * share, edge)


@dataclass(frozen=True)
class Arbitrage:
    booksum: Fraction  # sum of 1/d over the outcomes
    is_arbitrage: bool  # booksum < 1: a profit whatever happens
    stakes: tuple[Fraction, ...]  # stake_i = total * (1/d_i) / booksum: every outcome pays the same
    payout: Fraction  # total / booksum, whichever outcome wins
    profit: Fraction
    roi: Fraction  # 1 / booksum - 1


def arbitrage(decimal_odds: Sequence[Fraction], total_stake: Fraction) -> Arbitrage:
    """The best price on each outcome of one market (from any books), staked to pay the same."""
    check_stake(total_stake)
    if len(decimal_odds) < 2:
        raise InvalidInput("odds", "an arbitrage needs at least two outcomes")
    total = sum((1 / d for d in decimal_odds), Fraction(0))
    stakes = tuple(total_stake / (d * total) for d in decimal_odds)
    paid = total_stake / total
    return Arbitrage(total, total < 1, stakes, paid, paid - total_stake, 1 / total - 1)


@dataclass(frozen=True)
class ClosingLineValue:
    clv: Fraction  # d_taken * p_close - 1: the expected return per unit at the closing fair price
    probability_edge: Fraction  # p_close - 1/d_taken
    closing_fair_odds: Fraction  # 1 / p_close
    beat_close: bool


def closing_line_value(d_taken: Fraction, p_close: Fraction) -> ClosingLineValue:
    if not 0 < p_close < 1:
        raise InvalidInput("closing_probability", "must be between 0 and 1 (exclusive)")
    clv = d_taken * p_close - 1
    return ClosingLineValue(clv, p_close - 1 / d_taken, 1 / p_close, clv > 0)
