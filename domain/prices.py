"""Price formats and their exact conversions.

Internally a price is its decimal odds d as an exact rational (the return per unit staked,
stake included). The other formats, exactly:

- American a:   d = 1 + a/100 for a >= +100,  d = 1 + 100/|a| for a <= -100
- fractional f: d = 1 + f (f = profit per unit staked, e.g. 10/11)
- implied p:    d = 1 / p

Number type: `Fraction`. A served price, its American and fractional forms and the calculations
built on them are exact (-110 American is 21/11 decimal, not 1.9090909090909092), so a figure
never depends on where it was converted. The American <-> decimal pair (`decimal_of_american`,
`american`) is written once, generic over the number it is given, because three callers hold
other numbers by design and must not keep copies of the formula: ingest checks the source's
`Decimal` digits, the sandbox simulates in floats, and the read models carry floats. Each of
them gets the same expression evaluated in its own type.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Literal, NamedTuple, TypeVar, get_args

from domain.exact import InvalidInput, Number, exact, round_half_even

# The one list of price formats, each set built on the one before (a Literal of Literals is their
# union, in order), so a format is named once:
# the formats a book's quote arrives in (an event's `price_format`)
QuoteFormat = Literal["decimal", "american"]
# the formats odds are written in (a quote's, and the fractional odds people write: 5/2, evens)
OddsFormat = Literal[QuoteFormat, "fractional"]
# every format a price is served and converted in (the implied probability too)
PriceFormat = Literal[OddsFormat, "implied"]
QUOTE_FORMATS: tuple[QuoteFormat, ...] = get_args(QuoteFormat)
PRICE_FORMATS: tuple[PriceFormat, ...] = get_args(PriceFormat)

N = TypeVar("N", Fraction, Decimal, float)  # the American <-> decimal pair works in any of these

# the prices we serve: American -100,000,000 to +100,000,000; beyond that floats lose the sums
MIN_DECIMAL_ODDS = 1 + Fraction(1, 1_000_000)
MAX_DECIMAL_ODDS = Fraction(1_000_001)


class Price(NamedTuple):
    """One price in every format, exact."""

    decimal: Fraction
    american: Fraction
    fractional: Fraction
    implied: Fraction


def to_decimal(value: Number, price_format: PriceFormat = "decimal", field: str | None = "odds") -> Fraction:
    """Decimal odds of a price written in `price_format`; refuses what is not a price."""
    x = exact(value, field)
    if price_format == "decimal":
        if x <= 1:
            raise InvalidInput(field, f"decimal odds must be above 1, got {_show(x)}")
        d = x
    elif price_format == "american":
        if -100 < x < 100:
            raise InvalidInput(field, f"American odds must be -100 or below, or +100 or above, got {_show(x)}")
        d = decimal_of_american(x)
    elif price_format == "fractional":
        if x <= 0:
            raise InvalidInput(field, f"fractional odds must be above zero, got {_show(x)}")
        d = 1 + x
    elif price_format == "implied":
        if not 0 < x < 1:
            raise InvalidInput(field, f"an implied probability must be between 0 and 1 (exclusive), got {_show(x)}")
        d = 1 / x
    else:
        raise InvalidInput("format", f"unknown price format {price_format!r}")
    if not MIN_DECIMAL_ODDS <= d <= MAX_DECIMAL_ODDS:
        raise InvalidInput(
            field, f"price outside the supported range (decimal 1.000001 to 1000001), got decimal {_show(d)}"
        )
    return d


def decimal_of_american(a: N) -> N:
    """Decimal odds of American odds a (a >= +100 or a <= -100): 1 + a/100, or 1 + 100/|a|."""
    return 1 + (a / 100 if a > 0 else 100 / -a)


def american(d: N) -> N:
    """American odds of decimal odds d: positive (profit on 100) from 2.0 up, else negative (stake for 100)."""
    return 100 * (d - 1) if d >= 2 else -100 / (d - 1)


def fractional(d: Fraction) -> Fraction:
    return d - 1


def implied(d: N) -> N:
    """Implied probability of decimal odds d: 1/d (margin included)."""
    return 1 / d


def fair_odds(p: N) -> N:
    """Decimal odds with no margin for a probability 0 < p: 1/p, the odds at which a bet on it breaks even."""
    return 1 / p


def from_decimal(d: Fraction) -> Price:
    return Price(d, american(d), fractional(d), implied(d))


def convert(value: Number, price_format: PriceFormat = "decimal", field: str | None = "odds") -> Price:
    return from_decimal(to_decimal(value, price_format, field))


def fraction_text(x: Fraction) -> str:
    """A fraction in lowest terms as bookmakers write it: "10/11", "5/2", "1/1" (evens)."""
    return f"{x.numerator}/{x.denominator}"


def display(price: Price) -> dict[str, str]:
    """The conventional display of each format: decimal to 2 places, American whole with its sign,
    fractional exact in lowest terms, implied as a percentage to 2 places (all half to even)."""
    us = round_half_even(price.american, 0)
    return {
        "decimal": f"{round_half_even(price.decimal, 2)}",
        "american": f"+{us}" if us > 0 else f"{us}",
        "fractional": fraction_text(price.fractional),
        "implied": f"{round_half_even(price.implied * 100, 2)}%",
    }


def _show(x: Fraction) -> str:
    """A value for a message: up to 6 places, no trailing zeros."""
    text = f"{round_half_even(x, 6):f}"
    return text.rstrip("0").rstrip(".") if "." in text else text
