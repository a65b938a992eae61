"""Margin removal for the calculations API and the CLI: the methods of `devig` (same formulas,
same parameters), computed exactly where the method is rational (multiplicative, additive,
two-outcome Shin's z) and to 50 significant digits where it solves an equation, together with
overround, hold, fair odds and warnings in words.

The float solver of `devig` brackets the root; Newton's method in 50-digit Decimal then polishes
it (two or three steps from a 1e-13 start). Convergence is judged on |sum p_i - 1| <= 1e-12,
the same rule as the hot path.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Callable, Sequence

from domain.devig import METHODS, devig_floats
from domain.exact import InvalidInput, round_half_even

PRECISION = 50
CONVERGED = Fraction(1, 10**12)
_NEWTON_STOP = Decimal("1e-45")
# the smallest solved probability kept as it is: the power method can give e.g. 1e-27000000, whose
# exact rational would have a 27-million-digit denominator
_FLOOR = Decimal("1e-100")
_NEWTON_STEPS = 60

PARAMETER_NAMES: dict[str, str | None] = {
    "multiplicative": None,
    "additive": "share",  # the equal amount taken off each implied probability
    "power": "k",
    "shin": "z",
    "odds_ratio": "c",
}


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


def booksum(decimal_odds: Sequence[Fraction]) -> Fraction:
    return sum((1 / d for d in decimal_odds), Fraction(0))


def overround(decimal_odds: Sequence[Fraction]) -> Fraction:
    return booksum(decimal_odds) - 1


def hold(decimal_odds: Sequence[Fraction]) -> Fraction:
    return 1 - 1 / booksum(decimal_odds)


def devig(method: str, decimal_odds: Sequence[Fraction]) -> Devig:
    """Fair probabilities of one book's prices for all outcomes of one market."""
    if method not in METHODS:
        raise InvalidInput("method", f"unknown method {method!r}; expected one of {', '.join(METHODS)}")
    if len(decimal_odds) < 2:
        raise InvalidInput("odds", "a market needs at least two outcomes")
    for i, d in enumerate(decimal_odds):
        if d <= 1:
            raise InvalidInput(f"odds[{i}]", "decimal odds must be above 1")
    implied = [1 / d for d in decimal_odds]
    total = sum(implied, Fraction(0))
    converged = True
    if method == "multiplicative":
        probabilities, parameter = [p / total for p in implied], None
    elif method == "additive":
        parameter = (total - 1) / len(implied)
        probabilities = [p - parameter for p in implied]
    else:
        probabilities, parameter = _solved(method, implied, total, decimal_odds)
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


def _solved(method: str, implied: list[Fraction], total: Fraction, decimal_odds: Sequence[Fraction]):
    with localcontext() as ctx:
        ctx.prec = PRECISION
        ctx.Emin, ctx.Emax = -10_000, 10_000  # underflow early: tiny powers need no million-digit zeros
        pi = [Decimal(p.numerator) / Decimal(p.denominator) for p in implied]
        s = Decimal(total.numerator) / Decimal(total.denominator)
        if method == "shin" and len(pi) == 2:
            # the closed form of devig_floats, exactly: z is rational in the implied probabilities
            diff2 = (implied[0] - implied[1]) ** 2
            z = (total - 1) * (diff2 - total) / (total * (diff2 - 1))
            zd = Decimal(z.numerator) / Decimal(z.denominator)
            q = [4 * p * p / s for p in pi]
            return [_fraction(_shin_term(zd, qi)[0]) for qi in q], z
        guess = devig_floats(method, [float(d) for d in decimal_odds]).parameter
        probabilities_at, excess = _EQUATIONS[method](pi, s)
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


def _power(pi: list[Decimal], s: Decimal):
    logs = [p.ln() for p in pi]

    def probabilities(k: Decimal) -> list[Decimal]:
        return [(k * lp).exp() for lp in logs]

    def excess(k: Decimal) -> tuple[Decimal, Decimal]:
        powered = probabilities(k)
        return sum(powered) - 1, sum(q * lp for q, lp in zip(powered, logs))

    return probabilities, excess


def _odds_ratio(pi: list[Decimal], s: Decimal):
    odds = [p / (1 - p) for p in pi]

    def probabilities(c: Decimal) -> list[Decimal]:
        return [o / (c + o) for o in odds]

    def excess(c: Decimal) -> tuple[Decimal, Decimal]:
        return sum(probabilities(c)) - 1, -sum(o / ((c + o) * (c + o)) for o in odds)

    return probabilities, excess


def _shin_term(z: Decimal, q: Decimal) -> tuple[Decimal, Decimal]:
    """As `devig._shin_term`: one outcome's probability and its z-derivative, q = 4 pi^2 / S."""
    root = (z * z + (1 - z) * q).sqrt()
    droot = (2 * z - q) / (2 * root)
    if z >= 0:
        denominator = root + z
        return q / (2 * denominator), -q * (droot + 1) / (2 * denominator * denominator)
    one_minus = 1 - z
    return (root - z) / (2 * one_minus), ((droot - 1) * one_minus + (root - z)) / (2 * one_minus * one_minus)


def _shin(pi: list[Decimal], s: Decimal):
    q = [4 * p * p / s for p in pi]

    def probabilities(z: Decimal) -> list[Decimal]:
        return [_shin_term(z, qi)[0] for qi in q]

    def excess(z: Decimal) -> tuple[Decimal, Decimal]:
        terms = [_shin_term(z, qi) for qi in q]
        return sum(t[0] for t in terms) - 1, sum(t[1] for t in terms)

    return probabilities, excess


_EQUATIONS = {"power": _power, "odds_ratio": _odds_ratio, "shin": _shin}
