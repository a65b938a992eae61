"""Every bound a source value must keep to become an event, in one place (docs/ingest.md, Bounds).

The bounds are what the sports and the markets allow, with room to spare; a value outside
them is a broken or hostile record, and is dead-lettered, never stored. Each check returns a
reason (a short sentence naming the field) or None, and never raises, whatever it is given:
NaN, infinities, huge exponents, integers of any length.

Text: names and free text are stored NFC with control, format (bidi controls, zero-width
characters), surrogate, private-use, unassigned and line/paragraph separator characters
removed and whitespace collapsed (`clean_text`); identifiers must already be clean.

Pure: imports no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import msgspec

# ---- prices ---------------------------------------------------------------------------------
# American odds are never inside (-100, +100); +1,000,000 (a million to one) is far beyond
# the longest price any book posts (futures longshots are a few hundred thousand at most).
AMERICAN_MIN = Decimal(100)
AMERICAN_MAX = Decimal(1_000_000)
# decimal odds are above 1 (a stake back plus something); 10,001 is +1,000,000 in decimal
DECIMAL_MAX = Decimal(10_001)

# ---- lines, scores, calendar ------------------------------------------------------------------
# a handicap or total of 1,000 points is beyond any sport's final score (the NFL's highest
# combined score is 113, basketball's 370); totals are never negative
POINT_MAX = Decimal(1_000)
SCORE_MAX = 999  # a team's score in one game
WEEK_MAX = 60  # season weeks, preseason and postseason included (the NFL has 22)
STAT_MAX = Decimal(1_000_000_000)  # the absolute value of one stat in one game (yards, EPA, ...)
YEAR_MIN, YEAR_MAX = 1880, 2100  # American football's first rules to the far future

# ---- sizes ------------------------------------------------------------------------------------
NAME_MAX = 200  # characters of a name or identifier (teams, players, books, venues, IDs)
TEXT_MAX = 2_000  # characters of any other text (headlines, plays, reasons)
FIELD_MAX = 10_000  # characters of any one raw field of a source record
RAW_MAX = 65_536  # bytes of the raw record kept in a dead letter (the rest is cut, and says so)
INT_DIGITS_MAX = 18  # digits of an integer read from text, checked before int() parses it
NUMBER_CHARS_MAX = 40  # characters of a number read from text
# significant digits and smallest exponent of a decimal: nflverse's ratios carry 15 to 17
# digits (3.25828279805137); 1E-30 is finer than anything a sport measures
DIGITS_MAX = 30
EXPONENT_MIN = -30

# Unicode categories removed from names and refused in identifiers: control (NUL, ...),
# format (bidi controls, zero-width characters, BOM), surrogates (a byte that was not UTF-8),
# private use, unassigned, line and paragraph separators
FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})

_INTEGER = re.compile(r"[+-]?\d+")


def _forbidden(c: str) -> bool:
    return unicodedata.category(c) in FORBIDDEN_CATEGORIES


def clean_text(s: str) -> str:
    """NFC, without forbidden characters, whitespace runs collapsed to one space, trimmed."""
    s = unicodedata.normalize("NFC", s)
    if not s.isascii() or not s.isprintable():
        s = "".join(c for c in s if not _forbidden(c))
        # removing a character can leave a combining mark next to a new base: normalise again
        s = unicodedata.normalize("NFC", s)
    return " ".join(s.split())


def forbidden_char(s: str) -> str | None:
    """The first forbidden character of `s`, described (U+202E), or None."""
    if s.isascii() and s.isprintable():
        return None
    for c in s:
        if _forbidden(c):
            if "\udc80" <= c <= "\udcff":  # a byte that was not UTF-8 (read with surrogateescape)
                return f"byte 0x{ord(c) - 0xdc00:02x} that is not UTF-8"
            return f"character U+{ord(c):04X} ({unicodedata.category(c)})"
    return None


def text_problem(value: str, what: str, limit: int = TEXT_MAX) -> str | None:
    """Text as stored: no forbidden character, at most `limit` characters."""
    if len(value) > limit:
        return f"{what} is {len(value)} characters long (at most {limit})"
    bad = forbidden_char(value)
    return f"{what} has a {bad}" if bad else None


def identifier_problem(value: str, what: str) -> str | None:
    """A source's identifier is used as given, so it must already be clean: never repaired."""
    return text_problem(value, what, NAME_MAX)


def field_problem(value: str, what: str) -> str | None:
    """A raw field as read: at most FIELD_MAX characters, UTF-8 (no escaped byte)."""
    if len(value) > FIELD_MAX:
        return f"{what} is {len(value)} characters long (at most {FIELD_MAX})"
    if not value.isascii():
        for c in value:
            if "\udc80" <= c <= "\udcff":
                return f"{what} has a byte 0x{ord(c) - 0xdc00:02x} that is not UTF-8"
    return None


def integer_text_problem(value: str, what: str) -> str | None:
    """Text that should be an integer: a sign and at most INT_DIGITS_MAX digits (int() of a
    400-digit string works, and the number then overflows a database column)."""
    if not _INTEGER.fullmatch(value):
        return f"{what} is not an integer: {_shown(value)}"
    if len(value.lstrip("+-")) > INT_DIGITS_MAX:
        return f"{what} has {len(value.lstrip('+-'))} digits (at most {INT_DIGITS_MAX})"
    return None


def int_problem(value: int, what: str, low: int, high: int) -> str | None:
    if isinstance(value, bool) or not low <= value <= high:
        return f"{what} {_shown_int(value)} is outside {low}..{high}"
    return None


def number_problem(value: Decimal | int, what: str, limit: Decimal) -> str | None:
    """A finite number of sane precision whose absolute value is at most `limit`."""
    if isinstance(value, int):
        return None if -limit <= value <= limit else f"{what} {_shown_int(value)} is outside ±{limit}"
    if not value.is_finite():
        return f"{what} is not a finite number: {value}"
    if abs(value) > limit:
        return f"{what} {_shown(str(value))} is outside ±{limit}"
    sign, digits, exponent = value.as_tuple()
    if value and (len(digits) > DIGITS_MAX or exponent < EXPONENT_MIN):  # type: ignore[operator]
        return f"{what} {_shown(str(value))} has too many digits"
    return None


def price_problem(price: Decimal, fmt: str) -> str | None:
    """American: |price| within 100..1,000,000; decimal: above 1, at most 10,001."""
    if fmt == "american":
        problem = number_problem(price, "American price", AMERICAN_MAX)
        if problem is None and abs(price) < AMERICAN_MIN:
            return f"American price {price} is between -100 and +100"
        return problem
    problem = number_problem(price, "decimal price", DECIMAL_MAX)
    if problem is None and price <= 1:
        return f"decimal price {price} is not above 1"
    return problem


def point_problem(point: Decimal, market_type: str) -> str | None:
    """A line's point: within ±1,000; a total is not negative."""
    problem = number_problem(point, "point", POINT_MAX)
    if problem is None and market_type.startswith("totals") and point < 0:
        return f"total point {point} is negative"
    return problem


def year_problem(value: date, what: str) -> str | None:
    if not YEAR_MIN <= value.year <= YEAR_MAX:
        return f"{what} {value.isoformat()} is outside the years {YEAR_MIN}..{YEAR_MAX}"
    return None


def season_problem(season: str | int, what: str = "season") -> str | None:
    """A season label: a year ("2024"), or a year span ("2024-25"), its year within the bounds."""
    text = str(season)
    if not re.fullmatch(r"\d{4}(-\d{2})?", text):
        return f"{what} is not a season: {_shown(text)}"
    year = int(text[:4])
    if not YEAR_MIN <= year <= YEAR_MAX:
        return f"{what} {text} is outside the years {YEAR_MIN}..{YEAR_MAX}"
    return None


# ---- the backstop: every field of an event, whatever adapter made it ---------------------------

# string fields that are names (shown to people): at most NAME_MAX; other strings TEXT_MAX
_NAMES = frozenset({
    "name", "book", "book_name", "abbreviation", "venue", "position", "source", "source_id", "team_id", "game_id",
    "player_id", "market_id", "home_team_id", "away_team_id", "participant_id", "selection", "market_type",
    "market_name", "season", "season_type", "status", "period", "clock", "competition", "sport", "event_id",
})
# integer fields and their bounds
_INTS = {
    "week": (0, WEEK_MAX), "score_home": (0, SCORE_MAX), "score_away": (0, SCORE_MAX), "season": (YEAR_MIN, YEAR_MAX),
    "v": (1, 1_000),
}


def event_problem(event: Any) -> str | None:
    """The first field of an event outside the bounds, as a reason; None when all are inside.
    Adapters check their values as they read them (and say which column); this is the last
    check before the log, for every event of every adapter and of replay."""
    from schemas.events import Outcome, PriceQuoted, StatLineRecorded  # noqa: PLC0415 (events import nothing of ours)

    for field in event.__struct_fields__:
        value = getattr(event, field)
        problem = _value_problem(field, value)
        if problem:
            return problem
    if isinstance(event, PriceQuoted):
        if event.point is not None and (problem := point_problem(event.point, event.market_type)):
            return problem
        for outcome in event.outcomes:
            problem = _outcome_problem(outcome, event.market_type) if isinstance(outcome, Outcome) else "bad outcome"
            if problem:
                return problem
    if isinstance(event, StatLineRecorded):
        if len(event.stats) > 1_000:
            return f"{len(event.stats)} stats (at most 1000)"
        for key, stat in event.stats.items():
            problem = text_problem(key, "stat name", NAME_MAX) or number_problem(stat, f"stat {key}", STAT_MAX)
            if problem:
                return problem
    return None


def _outcome_problem(outcome: Any, market_type: str) -> str | None:
    for field in ("selection", "name", "participant_id"):
        value = getattr(outcome, field)
        if value is not None and (problem := text_problem(value, f"outcome {field}", NAME_MAX)):
            return problem
    if problem := price_problem(outcome.price, outcome.price_format):
        return problem
    if outcome.point is not None:
        return point_problem(outcome.point, market_type)
    return None


def _value_problem(field: str, value: Any) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        return text_problem(value, field, NAME_MAX if field in _NAMES else TEXT_MAX)
    if isinstance(value, int):
        low, high = _INTS.get(field, (-int(STAT_MAX), int(STAT_MAX)))
        return int_problem(value, field, low, high)
    if isinstance(value, Decimal):
        return number_problem(value, field, POINT_MAX)
    if isinstance(value, (datetime, date)):
        return year_problem(value, field)
    if isinstance(value, list):
        if len(value) > 1_000:
            return f"{field} has {len(value)} items (at most 1000)"
        for item in value:
            if isinstance(item, str):
                problem = text_problem(item, field, NAME_MAX)
            elif isinstance(item, msgspec.Struct) and not hasattr(item, "price"):  # KnownBy
                problem = next((p for f in item.__struct_fields__
                                if (p := _value_problem(f"{field}.{f}", getattr(item, f)))), None)
            else:
                problem = None  # outcomes: checked with their market
            if problem:
                return problem
    return None


# ---- dead letters ----------------------------------------------------------------------------

def visible(s: str) -> str:
    """`s` encodable as UTF-8: a byte that was not UTF-8 (read with surrogateescape) as \\xff,
    any other lone surrogate as \\udxxx."""
    try:
        return s.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return s.encode("utf-8", "backslashreplace").decode()


def bounded_raw(raw: str, limit: int = RAW_MAX) -> str:
    """The raw record for a dead letter: bytes that were not UTF-8 shown as \\xff escapes (so the
    letter can be encoded at all), at most `limit` bytes of UTF-8, marked where it was cut."""
    text = visible(raw)
    data = text.encode()
    if len(data) <= limit:
        return text
    return data[: limit - 64].decode("utf-8", "ignore") + f"… [cut: the record is {len(data)} bytes]"


def bounded_reason(reason: str) -> str:
    """A reason at most TEXT_MAX characters: reasons quote values, and values can be huge."""
    reason = visible(reason)
    return reason if len(reason) <= TEXT_MAX else reason[: TEXT_MAX - 20] + " … [cut]"


def _shown(value: str, limit: int = 40) -> str:
    """A value quoted in a reason, cut short: the dead letter keeps the whole record."""
    return repr(value if len(value) <= limit else value[:limit] + "…")


def _shown_int(value: int) -> str:
    # str() of a huge int is slow (and refused past 4300 digits): say how long it is instead
    text = str(value) if value.bit_length() < 200 else f"of about {int(value.bit_length() * 0.30103) + 1} digits"
    return text if len(text) <= 40 else text[:40] + "…"
