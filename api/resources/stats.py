"""Stat lines: box scores of a game and a player's game and season lines."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

import msgspec

from api.resources.common import Provenance, stored_provenance
from schemas.read_models import StatLineRecord, record

StatValue = int | str  # an integer, or a decimal as a string of its exact digits
_DECIMAL = re.compile(r"^-?\d+(\.\d+)?$")
_STAT_KEY = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


class StatLine(msgspec.Struct, kw_only=True):
    subject_id: str
    game_id: str | None
    season: str | None
    season_type: Literal["regular", "postseason", "preseason"] | None
    basis: Literal["total", "per_game", "rate"] | None
    stats: dict[str, StatValue]
    provenance: Provenance


def stat_value(value: Any) -> StatValue | None:
    """A stat as the API serves it; None for anything that is not a finite number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return int(value) if value.is_integer() else repr(value)
    if isinstance(value, Decimal):
        return str(value) if value.is_finite() else None
    if isinstance(value, str) and _DECIMAL.match(value):
        try:
            number = Decimal(value)
        except InvalidOperation:
            return None
        return int(number) if "." not in value else value
    return None


def stats_object(raw: Mapping[str, Any] | None) -> dict[str, StatValue]:
    """Only well-formed stat keys with numeric values appear, in key order."""
    out: dict[str, StatValue] = {}
    for key in sorted(raw or {}):
        value = stat_value(raw[key])  # type: ignore[index]
        if value is not None and _STAT_KEY.match(key):
            out[key] = value
    return out


_SEASON_TYPES = {"regular", "postseason", "preseason"}
_SEASON_TYPE_ALIASES = {"reg": "regular", "post": "postseason", "pre": "preseason"}
_BASES = {"total", "per_game", "rate"}


def stat_record(row: StatLineRecord | Mapping[str, Any]) -> StatLineRecord:
    """A stored line as its record (a `stat_lines` row with the record's columns, or the record)."""
    return row if isinstance(row, StatLineRecord) else record(StatLineRecord, row)


def stat_line(row: StatLineRecord | Mapping[str, Any]) -> StatLine:
    """A stored line (a record, or a `stat_lines` row with the record's columns) as served."""
    line = stat_record(row)
    season_type = line.season_type
    if season_type is not None:
        season_type = _SEASON_TYPE_ALIASES.get(season_type.lower(), season_type.lower())
        if season_type not in _SEASON_TYPES:
            season_type = None
    return StatLine(
        subject_id=line.subject_id,
        game_id=line.game_id,
        season=line.season,
        season_type=season_type,  # type: ignore[arg-type]
        basis=line.basis if line.basis in _BASES else None,  # type: ignore[arg-type]
        stats=stats_object(line.stats),
        provenance=stored_provenance(line.provenance),
    )
