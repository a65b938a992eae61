"""Query and path parameter rules shared by the read routes, and the
cursor positions each list pages by. Litestar validates the rules, api.request_checks what
Litestar is lax about; a break is a 400 `invalid_request` naming the field (api.errors)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Any

import msgspec
from litestar.params import QueryParameter

from api.conventions import decode_cursor
from api.problems import ProblemError
from api.resources.common import UTC
from domain.ids import ID_PATTERNS, id_regex

SLUG = r"^[a-z0-9][a-z0-9_]{0,40}$"
COMPETITION_REF = rf"^({id_regex('competition')}|[a-z0-9][a-z0-9_]{{0,39}})$"
SEASON = r"^[0-9]{4}(-[0-9]{2})?$"
MARKET_TYPE = r"^[a-z0-9][a-z0-9_]{0,63}$"


def id_pattern(kind: str) -> str:
    return ID_PATTERNS[kind].pattern


Cursor = Annotated[
    str | None,
    QueryParameter(
        min_length=1, max_length=512,
        description="Opaque `next_cursor` of the previous page; send it with the same filters.",
    ),
]


def page_limit(default: int, maximum: int) -> Any:
    return QueryParameter(name="limit", ge=1, le=maximum, description=f"Page size, 1 to {maximum} (default {default}).")


def bad_cursor(detail: str = "The cursor is not valid.") -> ProblemError:
    return ProblemError("invalid_request", detail, param="cursor")


def position(cursor: str | None, filters: dict[str, Any], *types: type) -> list[Any] | None:
    """The keyset position a cursor continues from, checked member by member against `types`
    (a cursor is opaque, not trusted: a forged one is refused, never passed to SQL as is)."""
    pos = decode_cursor(cursor, filters)
    if pos is None:
        return None
    if len(pos) != len(types) or not all(type(v) is t for v, t in zip(pos, types)):
        raise bad_cursor()
    return pos


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_micros(value: datetime) -> int:
    return (value - _EPOCH) // timedelta(microseconds=1)


def from_micros(value: int) -> datetime:
    try:
        return _EPOCH + timedelta(microseconds=value)
    except OverflowError:
        raise bad_cursor() from None


def rfc3339(raw: str | None, param: str) -> datetime | None:
    """A query date-time in RFC 3339 form only (Litestar's lax parsing would also take a bare
    number as Unix seconds); it must carry an offset, which is never guessed."""
    if raw is None:
        return None
    try:
        value = msgspec.convert(raw, datetime)
    except msgspec.ValidationError:
        raise ProblemError("invalid_request", f"'{param}' must be an RFC 3339 date-time, e.g. 2024-09-08T17:00:00Z.",
                           param=param) from None
    if value.tzinfo is None or value.utcoffset() is None:
        raise ProblemError("invalid_request", f"'{param}' needs a time zone offset (RFC 3339), e.g. Z.", param=param)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ProblemError("invalid_request", f"'{param}' is out of range.", param=param) from None


def text(value: str | None, param: str) -> str | None:
    """Free text bound for SQL: no NUL or other control characters, valid UTF-8."""
    if value is None:
        return None
    if any(ord(c) < 32 or 0xD800 <= ord(c) <= 0xDFFF for c in value):
        raise ProblemError("invalid_request", f"'{param}' contains control characters.", param=param)
    return value
