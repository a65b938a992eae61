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

import itertools
import operator
import re
import typing
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
NUMBER_CHARS_MAX = 40  # characters of a number written out (as read from text, or str() of a decimal)
# the smallest magnitude of a decimal that is not zero: 1E-30 is finer than anything a sport
# measures (nflverse's ratios carry 15 to 17 digits, such as 3.25828279805137)
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
    if s.isascii() and s.isprintable() and "  " not in s and s[:1] != " " and s[-1:] != " ":
        return s  # the common case: already clean (printable ASCII has no other whitespace)
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
    if not _precise_enough(value):
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


def price_ok(price: Decimal, fmt: str) -> bool:
    """`price_problem(price, fmt) is None`, in one expression: it runs for every price."""
    return (price.is_finite()
            and (AMERICAN_MIN <= abs(price) <= AMERICAN_MAX if fmt == "american" else 1 < price <= DECIMAL_MAX)
            and _precise_enough(price))


def point_ok(point: Decimal, market_type: str) -> bool:
    """`point_problem(point, market_type) is None`, in one expression."""
    return (point.is_finite() and -POINT_MAX <= point <= POINT_MAX and _precise_enough(point)
            and not (point < 0 and market_type.startswith("totals")))


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
# (on every event of every run, so planned once per event type: a run checks about a million
# fields a minute)

# string fields that are names (shown to people): at most NAME_MAX; other strings TEXT_MAX
_NAMES = frozenset({
    "name", "book", "book_name", "abbreviation", "venue", "position", "source", "source_id", "team_id", "game_id",
    "player_id", "market_id", "home_team_id", "away_team_id", "participant_id", "selection", "market_type",
    "market_name", "season", "season_type", "status", "period", "clock", "competition", "sport", "event_id",
    "entry_id", "slug", "kind", "possession",
})
# integer fields and their bounds (any other integer: within ±STAT_MAX)
_INTS = {
    "week": (0, WEEK_MAX), "score_home": (0, SCORE_MAX), "score_away": (0, SCORE_MAX), "season": (YEAR_MIN, YEAR_MAX),
}
_LIST_MAX = 1_000  # items of a list field (outcomes, aliases, known_by, stats)


class _Plan(msgspec.Struct):
    # (position in the struct's fields, name, ...): values are read with one astuple() call
    strings: list[tuple[int, str, int]]  # (.., length limit)
    ints: list[tuple[int, str, int, int]]  # (.., low, high)
    times: list[tuple[int, str]]
    decimals: list[tuple[int, str]]
    lists: list[tuple[int, str]]
    dicts: list[tuple[int, str]]
    texts: Any = None  # the string fields' values from the astuple() tuple, in one C call


def _texts_getter(positions: list[int]) -> Any:
    if len(positions) > 1:
        return operator.itemgetter(*positions)
    return (lambda values: (values[positions[0]],)) if positions else (lambda values: ())


_PLANS: dict[type, _Plan] = {}


def _plan(cls: type) -> _Plan:
    """Which check each field of an event type gets, from its annotation."""
    plan = _Plan([], [], [], [], [], [])
    for i, field in enumerate(msgspec.structs.fields(cls)):
        name, t = field.name, field.type
        if typing.get_origin(t) in (list, dict, typing.Literal):
            parts = (t,)
        else:  # a union such as `int | None`: its members
            parts = typing.get_args(t) or (t,)
        kinds = {str if (o := typing.get_origin(p)) is typing.Literal else o or p for p in parts}
        if list in kinds:
            plan.lists.append((i, name))
        elif dict in kinds:
            plan.dicts.append((i, name))
        elif datetime in kinds or date in kinds:
            plan.times.append((i, name))
        elif Decimal in kinds:
            plan.decimals.append((i, name))
        elif int in kinds:
            low, high = _INTS.get(name, (-int(STAT_MAX), int(STAT_MAX)))
            plan.ints.append((i, name, low, high))
        elif str in kinds:
            plan.strings.append((i, name, NAME_MAX if name in _NAMES else TEXT_MAX))
    plan.texts = _texts_getter([i for i, _, _ in plan.strings])
    _PLANS[cls] = plan
    return plan


def event_problem(event: Any, quote_numbers_checked: bool = False) -> str | None:
    """The first field of an event outside the bounds, as a reason; None when all are inside.
    Adapters check their values as they read them (and say which column); this is the last
    check before the log, for every event of every adapter and of replay.

    `quote_numbers_checked`: the event is a price quote whose point and outcome prices and
    points its adapter already put through `price_ok` and `point_ok` (ingest's Record says so):
    one check per value, not two. Everything else of it is checked here all the same."""
    plan = _PLANS.get(type(event)) or _plan(type(event))
    values = msgspec.structs.astuple(event)
    if _texts_known(plan, values):
        return _numbers_problem(event, plan, values, quote_numbers_checked)
    # every string field at once (None and empty ones left out: neither can break a bound);
    # only when one is longer than a name (the shortest limit) is each weighed against its own
    strings = list(filter(None, plan.texts(values)))
    if strings and max(map(len, strings)) > NAME_MAX:
        strings = []
        for i, field, limit in plan.strings:
            value = values[i]
            if value is not None:
                if len(value) > limit:
                    return f"{field} is {len(value)} characters long (at most {limit})"
                strings.append(value)
    market_type = getattr(event, "market_type", "")
    if problem := _field_numbers_problem(plan, values, market_type, quote_numbers_checked):
        return problem
    for i, field in plan.lists:
        items = values[i]
        if len(items) > _LIST_MAX:
            return f"{field} has {len(items)} items (at most {_LIST_MAX})"
        for item in items:
            if isinstance(item, str):
                if len(item) > NAME_MAX:
                    return f"{field} is {len(item)} characters long (at most {NAME_MAX})"
                strings.append(item)
            elif field == "outcomes":
                # (the texts inline: this runs for every outcome of every quote)
                for value in (item.selection, item.name, item.participant_id):
                    if value is not None:
                        if len(value) > NAME_MAX:
                            return f"outcome is {len(value)} characters long (at most {NAME_MAX})"
                        strings.append(value)
                if not quote_numbers_checked and (problem := _outcome_number_problem(item, market_type)):
                    return problem
            elif isinstance(item, msgspec.Struct):  # KnownBy: its text fields
                for part in msgspec.structs.astuple(item):
                    if isinstance(part, str):
                        if len(part) > NAME_MAX:
                            return f"{field} is {len(part)} characters long (at most {NAME_MAX})"
                        strings.append(part)
    for i, field in plan.dicts:
        stats = values[i]
        if len(stats) > _LIST_MAX:
            return f"{field} has {len(stats)} items (at most {_LIST_MAX})"
        for key, stat in stats.items():
            if not isinstance(key, str) or not isinstance(stat, (int, Decimal)) or isinstance(stat, bool):
                continue  # only stat lines have a dict field: names to numbers
            if len(key) > NAME_MAX:
                return f"{field} name is {len(key)} characters long (at most {NAME_MAX})"
            strings.append(key)
            if problem := number_problem(stat, f"{field} {key}", STAT_MAX):
                return problem
    # one scan of every string at once: printable text is the rule, a forbidden character rare
    joined = "".join(strings)
    if not joined.isprintable():
        for value in strings:
            if bad := forbidden_char(value):
                return f"a text field has a {bad}: {_shown(visible(value))}"
    # every text of the event passed: the ones short enough for any field are known good
    if len(_KNOWN_TEXTS) + len(strings) > _KNOWN_TEXTS_MAX:
        _KNOWN_TEXTS.clear()
        _KNOWN_TEXTS.update(_ALWAYS_KNOWN)
    _KNOWN_TEXTS.update(s for s in strings if len(s) <= NAME_MAX)
    return None


# Texts known to pass every text bound of every field: at most NAME_MAX characters (the
# shortest limit of any field, list item or stat name) with no forbidden character. An event's
# texts mostly repeat from event to event (the source, the book, the teams' names and IDs, the
# game's and market's IDs): when every one of them is known, one C-level set test replaces the
# per-field length and character checks, and only the checks of numbers and times run
# (`_numbers_problem`), in the order `event_problem` runs them, so the answer is the same.
# Filled only by events that passed every check; emptied when full (a file of distinct names
# cannot grow it), so a result never depends on what it holds. None and "" pass every bound.
_ALWAYS_KNOWN = (None, "")
_KNOWN_TEXTS: set[str | None] = set(_ALWAYS_KNOWN)
_KNOWN_TEXTS_MAX = 65_536
_OUTCOME_TEXTS = operator.attrgetter("selection", "name", "participant_id")


def _texts_known(plan: _Plan, values: tuple) -> bool:
    """Whether every text of the event (fields, list items, outcomes' and KnownBy's texts) is
    in `_KNOWN_TEXTS`; False for anything else (an event with a dict field, a value that is not
    a text where one belongs, a list past its bound): the full check then decides."""
    known = _KNOWN_TEXTS
    if plan.dicts:
        return False
    try:
        if not known.issuperset(plan.texts(values)):
            return False
        for i, field in plan.lists:
            items = values[i]
            if not items:
                continue
            if len(items) > _LIST_MAX:
                return False
            first = items[0]
            if type(first) is str:
                texts: Any = items
            elif field == "outcomes":
                texts = itertools.chain.from_iterable(map(_OUTCOME_TEXTS, items))
            elif isinstance(first, msgspec.Struct):
                texts = itertools.chain.from_iterable(map(msgspec.structs.astuple, items))
            else:
                return False
            if not known.issuperset(texts):
                return False
    except (TypeError, AttributeError):  # an unhashable value, an item of another shape
        return False
    return True


def _numbers_problem(event: Any, plan: _Plan, values: tuple, quote_numbers_checked: bool) -> str | None:
    """`event_problem` of an event whose texts are all known good (`_texts_known`): its checks
    that are not of texts, in its order."""
    market_type = getattr(event, "market_type", "")
    problem = _field_numbers_problem(plan, values, market_type, quote_numbers_checked)
    if problem is not None or quote_numbers_checked:
        return problem
    for i, field in plan.lists:
        if field == "outcomes":
            for item in values[i]:
                if problem := _outcome_number_problem(item, market_type):
                    return problem
    return None


def _field_numbers_problem(plan: _Plan, values: tuple, market_type: str, quote_numbers_checked: bool) -> str | None:
    """The checks of an event's own number and time fields (not its lists'), in the order both
    `event_problem` and `_numbers_problem` run them: integers, times, then decimal points unless
    the adapter checked them (`quote_numbers_checked`)."""
    for i, field, low, high in plan.ints:
        value = values[i]
        if value is not None and not low <= value <= high:
            return int_problem(value, field, low, high)
    for i, field in plan.times:
        value = values[i]
        if value is not None and not YEAR_MIN <= value.year <= YEAR_MAX:
            return year_problem(value, field)
    for i, _ in () if quote_numbers_checked else plan.decimals:
        value = values[i]
        if value is not None and not point_ok(value, market_type):
            return point_problem(value, market_type)
    return None


def _outcome_number_problem(outcome: Any, market_type: str) -> str | None:
    if not price_ok(outcome.price, outcome.price_format):
        return price_problem(outcome.price, outcome.price_format)
    point = outcome.point
    if point is not None and not point_ok(point, market_type):
        return point_problem(point, market_type)
    return None


def _precise_enough(value: Decimal) -> bool:
    """At most NUMBER_CHARS_MAX characters written out, nothing below 1E-30 (zero aside).
    (Not as_tuple(): it builds a named tuple in Python, and this runs for every price.)"""
    return len(str(value)) <= NUMBER_CHARS_MAX and (not value or value.adjusted() >= EXPONENT_MIN)


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
