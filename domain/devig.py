"""Margin removal ("devig"): each method's formula written once, for the projector and the
calculations alike.

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

Number type. The formulas below use only + - * / and the square root, logarithm and exponential
of `_Maths`, so each is written once and evaluated in the number its caller serves:

- `devig_floats` (the projector's hot path, a contract with it: keep its signature) runs in
  binary floats. The fold devigs every book of every line under all five methods on each event,
  and the read models store the results as float8, so floats are both fast enough and all the
  precision the served figure has.
- `devig` (the calculations API and the CLI) serves each figure rounded half to even at 12
  places, which a float solver stopped at |sum p_i - 1| <= 1e-12 cannot give. So it is exact
  where the method is rational (multiplicative, additive, two-outcome Shin's z: `Fraction`) and
  50 significant digits where it solves an equation: the float solver brackets the root, then
  Newton's method in 50-digit `Decimal` on the same equation polishes it (two or three steps).
  Convergence is judged on |sum p_i - 1| <= 1e-12, the same rule as the hot path.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Callable, Literal, NamedTuple, Sequence, TypeVar, get_args

import msgspec

from domain.exact import InvalidInput, round_half_even

Method = Literal["multiplicative", "additive", "power", "shin", "odds_ratio"]
METHODS: tuple[str, ...] = get_args(Method)
DEFAULT_METHOD = "multiplicative"
PARAMETER_NAMES: dict[str, str | None] = {
    "multiplicative": None,
    "additive": "share",  # the equal amount taken off each implied probability
    "power": "k",
    "shin": "z",
    "odds_ratio": "c",
}

TOLERANCE = 1e-12  # |sum p_i - 1| at which a solver stops
CONVERGED = Fraction(1, 10**12)  # the same, for the exact sums
MAX_ITERATIONS = 200  # Newton needs < 10 from these brackets; bisection alone < 100 in doubles
PRECISION = 50
_NEWTON_STOP = Decimal("1e-45")
# the smallest solved probability kept as it is: the power method can give e.g. 1e-27000000, whose
# exact rational would have a 27-million-digit denominator
_FLOOR = Decimal("1e-100")
_NEWTON_STEPS = 60

N = TypeVar("N", float, Decimal, Fraction)


# ---- the formulas, for any number type --------------------------------------------------------


class _Maths(NamedTuple):
    """The three functions the formulas need beyond arithmetic, for one number type."""

    sqrt: Callable
    ln: Callable
    exp: Callable


FLOATS = _Maths(math.sqrt, math.log, math.exp)
DECIMALS = _Maths(Decimal.sqrt, Decimal.ln, Decimal.exp)  # in the caller's decimal context


def booksum(decimal_odds: Sequence[N]) -> N:
    """sum(1/d): 1 plus the overround."""
    return sum(1 / d for d in decimal_odds)  # type: ignore[return-value]


def overround(decimal_odds: Sequence[N]) -> N:
    return booksum(decimal_odds) - 1


def hold(decimal_odds: Sequence[N]) -> N:
    """1 - 1/sum(1/d): the book's share of all money staked in proportion to the prices."""
    return 1 - 1 / booksum(decimal_odds)


def multiplicative(implied: Sequence[N], total: N) -> list[N]:
    return [p / total for p in implied]


def additive_share(implied: Sequence[N], total: N) -> N:
    return (total - 1) / len(implied)


def shin_z_of_two(implied: Sequence[N], total: N) -> N:
    """Shin's equation solved in closed form for two outcomes (rational in the implied probabilities)."""
    diff2 = (implied[0] - implied[1]) ** 2
    return (total - 1) * (diff2 - total) / (total * (diff2 - 1))


def _shin_term(z: N, q: N, maths: _Maths) -> tuple[N, N]:
    """One outcome's Shin probability and its z-derivative, for q = 4 pi^2 / S."""
    root = maths.sqrt(z * z + (1 - z) * q)
    droot = (2 * z - q) / (2 * root)
    if z >= 0:
        # (root - z) / (2 (1 - z)) rewritten as q / (2 (root + z)): no cancellation, fine at z = 1
        denominator = root + z
        return q / (2 * denominator), -q * (droot + 1) / (2 * denominator * denominator)
    one_minus = 1 - z
    return (root - z) / (2 * one_minus), ((droot - 1) * one_minus + (root - z)) / (2 * one_minus * one_minus)


def _shin_q(implied: Sequence[N], total: N) -> list[N]:
    return [4 * p * p / total for p in implied]


# Each solved method as (probabilities at x, excess at x -> (sum p_i - 1, its slope)).
Equation = tuple[Callable[[N], list[N]], Callable[[N], tuple[N, N]]]


def _power(implied: Sequence[N], total: N, maths: _Maths) -> Equation:
    logs = [maths.ln(p) for p in implied]
    exp = maths.exp

    def probabilities(k):
        return [exp(k * lp) for lp in logs]

    def excess(k):
        powered = probabilities(k)
        return sum(powered) - 1, sum(q * lp for q, lp in zip(powered, logs))

    return probabilities, excess


def _shin(implied: Sequence[N], total: N, maths: _Maths) -> Equation:
    q_values = _shin_q(implied, total)

    def probabilities(z):
        return [_shin_term(z, q, maths)[0] for q in q_values]

    def excess(z):
        value = slope = 0
        for q in q_values:
            p, dp = _shin_term(z, q, maths)
            value += p
            slope += dp
        return value - 1, slope

    return probabilities, excess


def _odds_ratio(implied: Sequence[N], total: N, maths: _Maths) -> Equation:
    odds = [p / (1 - p) for p in implied]

    def probabilities(c):
        return [o / (c + o) for o in odds]  # p_i = o_i / (c + o_i)

    def excess(c):
        value = slope = 0
        for o in odds:
            denominator = c + o
            value += o / denominator
            slope -= o / (denominator * denominator)
        return value - 1, slope

    return probabilities, excess


_EQUATIONS = {"power": _power, "shin": _shin, "odds_ratio": _odds_ratio}


# ---- floats: the projector's hot path ---------------------------------------------------------


class FloatDevig(msgspec.Struct, frozen=True, gc=False):
    """One book's result under one method, as the projector computes it.

    A msgspec struct outside the cyclic collector (gc=False; it holds only floats, bools and a
    tuple of floats, so it can be in no cycle): the projector memoises these by the hundred
    thousand (projections.consensus.devig_others), and as a NamedTuple (a tuple subclass, which
    the collector never untracks) each was walked by every full collection: 262,144 objects of
    a full memo, about half of the projector's heap, a pause of 0.5-1 s per full collection."""

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


def _bracket(method: str, implied: list[float], total: float, excess: Callable[[float], tuple[float, float]]
             ) -> tuple[float, float]:
    """An interval holding the method's parameter, value(lo) >= 0 >= value(hi)."""
    if method == "power":
        if total >= 1.0:
            # sum pi^k <= n * max(pi)^k, which is 1 at k = ln n / -ln max(pi)
            return 1.0, max(1.0, math.log(len(implied)) / -math.log(max(implied)))
        return 0.0, 1.0  # sum pi^0 = n > 1, sum pi^1 = S < 1
    if method == "shin":
        if total >= 1.0:
            return 0.0, 1.0  # the sum is sqrt(S) >= 1 at z = 0 and sum pi^2 / S < 1 at z = 1
        lo = -1.0  # the sum is sqrt(S) < 1 at z = 0 and tends to n as z -> -inf
        while excess(lo)[0] < 0 and lo > -1e12:
            lo *= 2.0
        return lo, 0.0
    if total >= 1.0:  # odds_ratio: at c = sum o_i every p_i <= o_i / c
        return 1.0, max(1.0, sum(p / (1.0 - p) for p in implied))
    lo = 1.0  # the sum is S < 1 at c = 1 and tends to n as c -> 0
    while excess(lo)[0] < 0 and lo > 1e-300:
        lo *= 0.5
    return lo, 1.0


def _solved_floats(method: str, implied: list[float], total: float) -> tuple[list[float], float | None, bool]:
    if method == "multiplicative":
        return multiplicative(implied, total), None, True
    if method == "additive":
        share = additive_share(implied, total)
        return [p - share for p in implied], share, True
    if method == "shin" and len(implied) == 2:
        z = shin_z_of_two(implied, total)
        return [_shin_term(z, q, FLOATS)[0] for q in _shin_q(implied, total)], z, True
    probabilities_at, excess = _EQUATIONS[method](implied, total, FLOATS)
    x, converged = _solve(excess, *_bracket(method, implied, total, excess))
    return probabilities_at(x), x, converged


def devig_floats(method: str, decimal_odds: Sequence[float]) -> FloatDevig:
    """No-vig probabilities of one book's prices for all outcomes of a market (decimal odds > 1).

    Raises ValueError for an unknown method, fewer than two prices, or a price that is not a
    finite number above 1.
    """
    if method not in METHODS:
        raise ValueError(f"unknown devig method {method!r}; expected one of {', '.join(METHODS)}")
    if len(decimal_odds) < 2:
        raise ValueError("a market needs at least two outcomes")
    implied = []
    for d in decimal_odds:
        if not (1.0 < d < math.inf):  # also refuses NaN
            raise ValueError(f"decimal odds must be finite and above 1, got {d!r}")
        implied.append(1.0 / d)
    total = math.fsum(implied)
    probabilities, parameter, converged = _solved_floats(method, implied, total)
    return FloatDevig(
        tuple(probabilities), parameter, all(0.0 < p < 1.0 for p in probabilities), converged
    )


# ---- exact: the calculations ------------------------------------------------------------------


@dataclass(frozen=True)
class Devig:
    method: str
    probabilities: tuple[Fraction, ...]  # input order
    parameter: Fraction | None
    overround: Fraction  # sum(1/d) - 1
    hold: Fraction  # 1 - 1/sum(1/d): the book's share of all money staked in proportion to the prices
    in_range: bool  # every probability strictly between 0 and 1
    converged: bool
    messages: tuple[str, ...]

    @property
    def fair_odds(self) -> tuple[Fraction | None, ...]:
        """1/p for each outcome; None where p is outside (0, 1) and so has no price."""
        return tuple(1 / p if 0 < p < 1 else None for p in self.probabilities)

    @property
    def parameter_name(self) -> str | None:
        return PARAMETER_NAMES[self.method]


def devig(method: str, decimal_odds: Sequence[Fraction]) -> Devig:
    """Fair probabilities of one book's prices for all outcomes of one market, exact or to 50 digits."""
    if method not in METHODS:
        raise InvalidInput("method", f"unknown method {method!r}; expected one of {', '.join(METHODS)}")
    if len(decimal_odds) < 2:
        raise InvalidInput("odds", "a market needs at least two outcomes")
    for i, d in enumerate(decimal_odds):
        if d <= 1:
            raise InvalidInput(f"odds[{i}]", "decimal odds must be above 1")
    implied = [1 / d for d in decimal_odds]
    total = booksum(decimal_odds)
    converged = True
    parameter: Fraction | None
    if method == "multiplicative":
        probabilities, parameter = multiplicative(implied, total), None
    elif method == "additive":
        parameter = additive_share(implied, total)
        probabilities = [p - parameter for p in implied]
    else:
        probabilities, parameter = _solved_exact(method, implied, total, decimal_odds)
        converged = abs(sum(probabilities, Fraction(0)) - 1) <= CONVERGED
    in_range = all(0 < p < 1 for p in probabilities)
    return Devig(
        method, tuple(probabilities), parameter, total - 1, 1 - 1 / total, in_range, converged,
        tuple(_messages(method, probabilities, parameter, total, converged)),
    )


def _messages(method: str, probabilities: list[Fraction], parameter: Fraction | None, total: Fraction,
              converged: bool) -> list[str]:
    out = []
    if not converged:
        out.append(f"The {method} solver did not reach |sum - 1| <= 1e-12; its probabilities are not usable.")
    for i, p in enumerate(probabilities):
        if not 0 < p < 1:
            out.append(
                f"The {method} method gives outcome {i + 1} (odds[{i}]) a probability of "
                f"{round_half_even(p, 6)}, outside (0, 1), so it has no fair price: this method does not "
                "suit this market; multiplicative, power, shin or odds_ratio stay inside (0, 1)."
            )
    if total < 1:
        out.append(
            f"The prices sum to {round_half_even(total, 6)} of implied probability, less than 1: "
            "there is no margin to remove, so the method scales the probabilities up."
        )
        if method == "shin" and parameter is not None and parameter < 0:
            out.append("Shin's z is negative here; it measures insider trading only when the book has a margin.")
    return out


def _decimal(x: Fraction) -> Decimal:
    return Decimal(x.numerator) / Decimal(x.denominator)


def _solved_exact(method: str, implied: list[Fraction], total: Fraction, decimal_odds: Sequence[Fraction]
                  ) -> tuple[list[Fraction], Fraction]:
    with localcontext() as ctx:
        ctx.prec = PRECISION
        ctx.Emin, ctx.Emax = -10_000, 10_000  # underflow early: tiny powers need no million-digit zeros
        pi = [_decimal(p) for p in implied]
        s = _decimal(total)
        if method == "shin" and len(pi) == 2:
            z = shin_z_of_two(implied, total)  # exactly: z is rational in the implied probabilities
            zd = _decimal(z)
            return [_fraction(_shin_term(zd, q, DECIMALS)[0]) for q in _shin_q(pi, s)], z
        guess = devig_floats(method, [float(d) for d in decimal_odds]).parameter
        probabilities_at, excess = _EQUATIONS[method](pi, s, DECIMALS)
        x = _newton(excess, Decimal(repr(guess)))
        return [_fraction(p) for p in probabilities_at(x)], Fraction(x)


def _fraction(p: Decimal) -> Fraction:
    """A solved probability as a rational; one below 1e-100, or one that underflowed to zero, is
    reported as 1e-100, keeping it positive, as these methods guarantee."""
    return Fraction(p if abs(p) >= _FLOOR else _FLOOR.copy_sign(p))


def _newton(excess: Callable[[Decimal], tuple[Decimal, Decimal]], x: Decimal) -> Decimal:
    for _ in range(_NEWTON_STEPS):
        value, slope = excess(x)
        if abs(value) <= _NEWTON_STOP or slope == 0:
            break
        x -= value / slope
    return x
