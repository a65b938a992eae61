"""Stat values as the read models hold them: exact decimal text of a rational.

A season total, a per-game mean or a season rate is a rational number. It is served as its
exact decimal digits when its expansion terminates (a denominator of 2s and 5s only:
501 / 2 = "250.5", 273 / 256 = "1.06640625"), else rounded half to even at
`PLACES` decimal places with all of them written ("30.666666666667"), the same rounding the
betting maths uses. Whole numbers are integers. Text never uses exponent notation.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from domain.exact import round_half_even

PLACES = 12  # decimal places of a value whose expansion does not terminate

StatOut = int | str  # an integer, or a decimal's exact digits


def as_fraction(value: int | Decimal | Fraction) -> Fraction:
    return value if isinstance(value, Fraction) else Fraction(value)


def terminating_places(value: Fraction) -> int | None:
    """Digits after the point of `value`'s decimal expansion, or None when it never ends."""
    d = value.denominator
    twos = fives = 0
    while d % 2 == 0:
        d //= 2
        twos += 1
    while d % 5 == 0:
        d //= 5
        fives += 1
    return max(twos, fives) if d == 1 else None


def stat_text(value: Fraction) -> StatOut:
    """The served form of a computed stat: an integer, exact digits, or `PLACES` rounded places."""
    if value.denominator == 1:
        return value.numerator
    places = terminating_places(value)
    if places is None:
        return format(round_half_even(value, PLACES), "f")
    scaled = value * 10**places  # a whole number: the expansion ends after `places` digits
    return format(Decimal(f"{scaled.numerator}E-{places}"), "f")


__all__ = ["PLACES", "StatOut", "as_fraction", "stat_text", "terminating_places"]
