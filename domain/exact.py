"""Exact numbers for the odds maths: user input to rationals, and the one rounding rule.

Every price, stake and probability is held as a `fractions.Fraction` built from the decimal text
of the input, so 1.1 is 11/10 and -110 American is 21/11 decimal, exactly. Binary floats never
hold a value we compute with (the projector's `devig_floats` hot path aside). Rounding happens
only when a value is shown: half to even, at a stated number of decimal places.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction

Number = int | float | str | Decimal | Fraction

# the text a number may be written in: a decimal (with optional exponent), a ratio "a/b", "evens"
NUMBER_PATTERN = r"^[+-]?(\d{1,30}(\.\d{0,30})?|\.\d{1,30})([eE][+-]?\d{1,3})?(/[+-]?\d{1,30})?$|^[Ee][Vv]([Ee][Nn])?[Ss]$"
_NUMBER = re.compile(NUMBER_PATTERN)
MAX_MAGNITUDE = Fraction(10**15)  # beyond any stake, line or price we serve
MAX_TEXT = 64


class InvalidInput(ValueError):
    """An input the maths cannot use; `field` names it as the request does (e.g. `odds[1]`)."""

    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message

    def at(self, prefix: str) -> "InvalidInput":
        """The same error with its field placed under `prefix` (e.g. `legs[0]`)."""
        field = f"{prefix}.{self.field}" if self.field else prefix
        return InvalidInput(field, self.message)


def exact(value: Number, field: str | None = None) -> Fraction:
    """The exact rational a number means.

    A float is read by its shortest decimal text (`repr`), which gives back the digits a JSON
    number or a command-line argument was written with (up to 15 significant digits), not the
    binary approximation. Strings may hold a decimal, a ratio "10/11" or "evens".
    """
    if isinstance(value, bool):
        raise InvalidInput(field, "expected a number, got a boolean")
    if isinstance(value, Fraction):
        result = value
    elif isinstance(value, int):
        result = Fraction(value)
    elif isinstance(value, (float, Decimal)):
        result = _from_decimal_text(repr(value) if isinstance(value, float) else str(value), field)
    elif isinstance(value, str):
        result = _from_text(value.strip(), field)
    else:
        raise InvalidInput(field, f"expected a number, got {type(value).__name__}")
    if abs(result) > MAX_MAGNITUDE:
        raise InvalidInput(field, "number is too large (the limit is 1e15)")
    return result


def _from_text(text: str, field: str | None) -> Fraction:
    if len(text) > MAX_TEXT or not _NUMBER.match(text):
        raise InvalidInput(field, f"not a number: {text[:MAX_TEXT]!r} (write e.g. 1.91, -110, 10/11 or evens)")
    if text.lower() in ("evens", "evs"):
        return Fraction(1)
    if "/" in text:
        top, bottom = text.split("/")
        denominator = int(bottom)
        if denominator == 0:
            raise InvalidInput(field, f"{text!r} divides by zero")
        return _from_decimal_text(top, field) / denominator
    return _from_decimal_text(text, field)


def _from_decimal_text(text: str, field: str | None) -> Fraction:
    try:
        number = Decimal(text)
    except InvalidOperation:
        raise InvalidInput(field, f"not a number: {text!r}") from None
    if not number.is_finite():
        raise InvalidInput(field, f"not a finite number: {text!r}")
    # refuse before building the rational: 1e999999999 would be a billion-digit integer
    if number and not -40 <= number.adjusted() <= 40:
        raise InvalidInput(field, f"number out of range: {text!r}")
    return Fraction(number)


def round_half_even(value: Fraction, places: int) -> Decimal:
    """`value` rounded to `places` decimal places, ties to even, computed exactly."""
    scale = 10**places
    quotient, remainder = divmod(value.numerator * scale, value.denominator)
    twice = 2 * remainder
    if twice > value.denominator or (twice == value.denominator and quotient % 2 == 1):
        quotient += 1
    return Decimal(f"{quotient}E-{places}")  # built from text: exact, whatever the context precision


def to_float(value: Fraction, places: int = 12) -> float:
    """The number a JSON response carries: rounded half to even at `places`, then the nearest double."""
    return float(round_half_even(value, places))
