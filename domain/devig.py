"""Margin removal ("devig").

`devig_floats` is the projector's hot-path entry point: plain floats in, plain floats out.
Its signature is a contract with the projector; keep it stable.

Every method starts from the implied probabilities pi_i = 1/d_i, whose sum S ("booksum") is
1 + overround, and finds fair probabilities p_i summing to 1:

- multiplicative: p_i = pi_i / S                                        parameter: None
- additive:       p_i = pi_i - (S - 1) / n                              parameter: (S - 1) / n
- power:          p_i = pi_i ** k, k solving sum p_i = 1                 parameter: k
- shin:           p_i = (sqrt(z^2 + 4 (1 - z) pi_i^2 / S) - z) / (2 (1 - z)), z solving
                  sum p_i = 1 (closed form for two outcomes)            parameter: z
- odds_ratio:     p_i / (1 - p_i) = (pi_i / (1 - pi_i)) / c, c solving sum p_i = 1
                                                                        parameter: c

Each sum is strictly decreasing in its parameter, so a bracketed Newton (bisection when a Newton
step leaves the bracket) always finds the one root.
"""

from __future__ import annotations

import math
from typing import Callable, NamedTuple, Sequence

METHODS = ("multiplicative", "additive", "power", "shin", "odds_ratio")
DEFAULT_METHOD = "multiplicative"

TOLERANCE = 1e-12  # |sum p_i - 1| at which a solver stops
MAX_ITERATIONS = 200  # Newton needs < 10 from these brackets; bisection alone < 100 in doubles


class FloatDevig(NamedTuple):
    probabilities: tuple[float, ...]  # in input order, summing to 1
    parameter: float | None  # the method's parameter (power k, shin z, odds-ratio c); None if none
    in_range: bool  # False when some probability falls outside (0, 1)
    converged: bool  # False when a solver did not reach 1e-12


def _solve(excess: Callable[[float], tuple[float, float]], lo: float, hi: float) -> tuple[float, bool]:
    """Root of a decreasing `excess(x) -> (value, slope)` with value(lo) >= 0 >= value(hi)."""
    x = 0.5 * (lo + hi)
    for _ in range(MAX_ITERATIONS):
        value, slope = excess(x)
        if abs(value) <= TOLERANCE:
            # one more Newton step is nearly free and takes quadratic convergence to the last digit
            polished = x - value / slope if slope < 0 else x
            return (polished if lo <= polished <= hi else x), True
        if value > 0:
            lo = x
        else:
            hi = x
        step = x - value / slope if slope < 0 else math.nan
        # bisect when Newton leaves the bracket (or the slope vanished): always progress
        x = step if lo < step < hi else 0.5 * (lo + hi)
        if hi - lo <= 4 * math.ulp(x):
            break
    value, _ = excess(x)
    return x, abs(value) <= TOLERANCE


def _multiplicative(implied: list[float], total: float) -> tuple[list[float], float | None, bool]:
    return [p / total for p in implied], None, True


def _additive(implied: list[float], total: float) -> tuple[list[float], float | None, bool]:
    share = (total - 1.0) / len(implied)
    return [p - share for p in implied], share, True


def _power(implied: list[float], total: float) -> tuple[list[float], float | None, bool]:
    logs = [math.log(p) for p in implied]

    def excess(k: float) -> tuple[float, float]:
        powered = [math.exp(k * lp) for lp in logs]
        return sum(powered) - 1.0, sum(q * lp for q, lp in zip(powered, logs))

    if total >= 1.0:
        # sum pi^k <= n * max(pi)^k, which is 1 at k = ln n / -ln max(pi)
        lo, hi = 1.0, max(1.0, math.log(len(implied)) / -max(logs))
    else:
        lo, hi = 0.0, 1.0  # sum pi^0 = n > 1, sum pi^1 = S < 1
    k, converged = _solve(excess, lo, hi)
    return [math.exp(k * lp) for lp in logs], k, converged


def _shin_term(z: float, q: float) -> tuple[float, float]:
    """One outcome's Shin probability and its z-derivative, for q = 4 pi^2 / S."""
    root = math.sqrt(z * z + (1.0 - z) * q)
    droot = (2.0 * z - q) / (2.0 * root)
    if z >= 0.0:
        # (root - z) / (2 (1 - z)) rewritten as q / (2 (root + z)): no cancellation, fine at z = 1
        denominator = root + z
        return q / (2.0 * denominator), -q * (droot + 1.0) / (2.0 * denominator * denominator)
    one_minus = 1.0 - z
    return (root - z) / (2.0 * one_minus), ((droot - 1.0) * one_minus + (root - z)) / (2.0 * one_minus * one_minus)


def _shin(implied: list[float], total: float) -> tuple[list[float], float | None, bool]:
    q_values = [4.0 * p * p / total for p in implied]
    if len(implied) == 2:
        # Shin's equation solved in closed form for two outcomes (the tests check it against the equation)
        diff2 = (implied[0] - implied[1]) ** 2
        z = (total - 1.0) * (diff2 - total) / (total * (diff2 - 1.0))
        return [_shin_term(z, q)[0] for q in q_values], z, True

    def excess(z: float) -> tuple[float, float]:
        value = slope = 0.0
        for q in q_values:
            p, dp = _shin_term(z, q)
            value += p
            slope += dp
        return value - 1.0, slope

    if total >= 1.0:
        lo, hi = 0.0, 1.0  # the sum is sqrt(S) >= 1 at z = 0 and sum pi^2 / S < 1 at z = 1
    else:
        lo, hi = -1.0, 0.0  # the sum is sqrt(S) < 1 at z = 0 and tends to n as z -> -inf
        while excess(lo)[0] < 0 and lo > -1e12:
            lo *= 2.0
    z, converged = _solve(excess, lo, hi)
    return [_shin_term(z, q)[0] for q in q_values], z, converged


def _odds_ratio(implied: list[float], total: float) -> tuple[list[float], float | None, bool]:
    odds = [p / (1.0 - p) for p in implied]

    def excess(c: float) -> tuple[float, float]:
        # p_i = o_i / (c + o_i)
        value = slope = 0.0
        for o in odds:
            denominator = c + o
            value += o / denominator
            slope -= o / (denominator * denominator)
        return value - 1.0, slope

    if total >= 1.0:
        lo, hi = 1.0, max(1.0, sum(odds))  # at c = sum o_i every p_i <= o_i / c
    else:
        lo, hi = 1.0, 1.0  # sum is S < 1 at c = 1 and tends to n as c -> 0
        while excess(lo)[0] < 0 and lo > 1e-300:
            lo *= 0.5
    c, converged = _solve(excess, lo, hi)
    return [o / (c + o) for o in odds], c, converged


_METHOD_FUNCTIONS = {
    "multiplicative": _multiplicative,
    "additive": _additive,
    "power": _power,
    "shin": _shin,
    "odds_ratio": _odds_ratio,
}


def devig_floats(method: str, decimal_odds: Sequence[float]) -> FloatDevig:
    """No-vig probabilities of one book's prices for all outcomes of a market (decimal odds > 1).

    Raises ValueError for an unknown method, fewer than two prices, or a price that is not a
    finite number above 1.
    """
    function = _METHOD_FUNCTIONS.get(method)
    if function is None:
        raise ValueError(f"unknown devig method {method!r}; expected one of {', '.join(METHODS)}")
    if len(decimal_odds) < 2:
        raise ValueError("a market needs at least two outcomes")
    implied = []
    for d in decimal_odds:
        if not (1.0 < d < math.inf):  # also refuses NaN
            raise ValueError(f"decimal odds must be finite and above 1, got {d!r}")
        implied.append(1.0 / d)
    total = math.fsum(implied)
    probabilities, parameter, converged = function(implied, total)
    return FloatDevig(
        tuple(probabilities), parameter, all(0.0 < p < 1.0 for p in probabilities), converged
    )
