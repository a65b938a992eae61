"""Prices and probabilities as served: the number at full precision, with display strings
beside it. Display rounding is for people only; clients compute with the numbers."""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation
from typing import Any

import msgspec

from domain import prices


class Price(msgspec.Struct, kw_only=True):
    """One price in two formats: `decimal` and `american` at full precision, and how each reads."""

    decimal: float
    american: float
    decimal_display: str  # two decimals, e.g. "1.91"
    american_display: str  # signed whole number, e.g. "-110" or "+150"


def number(value: Any) -> float | None:
    """A finite float from a read-model JSON value (number, or decimal digits as a string)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        out = float(value)
    elif isinstance(value, (str, Decimal)):
        try:
            out = float(Decimal(value))
        except (InvalidOperation, ValueError):
            return None
    else:
        return None
    return out if math.isfinite(out) else None


def american(decimal: float) -> float:
    """American odds of a decimal price > 1 (domain/prices.py), rounded to 10 places: the float division leaves noise such as -101.99999999999999 for a
    price quoted at -102, and no American price means anything below a ten-billionth."""
    return round(prices.american(decimal), 10)


def american_display(value: float) -> str:
    whole = round(value)
    if whole == -100:  # a price just under evens rounds to -100; evens reads +100
        whole = 100
    return f"+{whole}" if whole > 0 else str(whole)


def price(decimal: float | None) -> Price | None:
    if decimal is None or not decimal > 1.0:
        return None
    us = american(decimal)
    return Price(decimal=decimal, american=us, decimal_display=f"{decimal:.2f}", american_display=american_display(us))


def fair_price(probability: float | None) -> Price | None:
    """The price with no margin (domain.prices.fair_odds)."""
    if probability is None or not 0.0 < probability < 1.0:
        return None
    return price(prices.fair_odds(probability))


def percent(value: float | None) -> str | None:
    return None if value is None else f"{value * 100:.2f}%"
