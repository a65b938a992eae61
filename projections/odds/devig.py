"""Margin removal ("devig").

`devig_floats` is the projector's hot-path entry point: plain floats in, plain floats out.
Its signature is a contract with the projector; keep it stable.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

METHODS = ("multiplicative", "additive", "power", "shin", "odds_ratio")
DEFAULT_METHOD = "multiplicative"


class FloatDevig(NamedTuple):
    probabilities: tuple[float, ...]  # in input order, summing to 1
    parameter: float | None  # the method's parameter (power k, shin z, odds-ratio c); None if none
    in_range: bool  # False when some probability falls outside (0, 1)
    converged: bool  # False when a solver did not reach 1e-12


def devig_floats(method: str, decimal_odds: Sequence[float]) -> FloatDevig:
    """No-vig probabilities of one book's prices for all outcomes of a market (decimal odds > 1)."""
    if method != "multiplicative":
        raise NotImplementedError(method)
    implied = [1.0 / d for d in decimal_odds]
    total = sum(implied)
    probabilities = tuple(p / total for p in implied)
    return FloatDevig(probabilities, None, all(0.0 < p < 1.0 for p in probabilities), True)
