"""Shared pieces of every resource: common metadata, provenance, team objects."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from typing import Any

import msgspec

from schemas.read_models import KnownBy, SourceTimes

UTC = timezone.utc
_ZERO = timedelta(0)
# what `source` says when a value is our own derivation over several sources
ENGINE_SOURCE = "svc"

# attribution that a source's terms require, matched on the lower-cased source name
_ATTRIBUTIONS = (
    ("nflverse", "Data: nflverse (nflverse.com; schedules maintained by Lee Sharpe), CC-BY 4.0"),
    ("odds", "Odds data: The Odds API (the-odds-api.com)"),
)


class Provenance(msgspec.Struct, kw_only=True):
    """Where a value came from: who, when the source says it was true, when we read it."""

    source: str
    # when the source says the value was true; null when the source gives no time for it (an
    # nflverse result or game line: docs/ingest.md), never an instant of our making
    source_ts: datetime | None
    ingest_ts: datetime
    known_by: list[KnownBy] = []


class Meta(msgspec.Struct, kw_only=True):
    """Common metadata carried by every resource."""

    as_of: datetime
    source: str
    stale_after_ms: int | None
    attribution: str | None
    request_id: str | None
    live_topics: list[str]
    rg_line: str | None


class TeamRef(msgspec.Struct, kw_only=True):
    """The team object games and players embed."""

    id: str
    name: str
    abbreviation: str | None
    competition: str | None
    provenance: Provenance


def utc(value: datetime | None) -> datetime | None:
    """The same instant in UTC (RFC 3339 `Z` on the wire); naive values are taken as UTC."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _ts(raw: Any, fallback: datetime) -> datetime:
    if isinstance(raw, datetime):
        return utc(raw)  # type: ignore[return-value]
    if isinstance(raw, str):
        try:  # the C parser reads RFC 3339 (with Z) fast; these are our own stored values
            return utc(datetime.fromisoformat(raw))  # type: ignore[return-value]
        except (ValueError, OverflowError):
            pass
    return utc(fallback)  # type: ignore[return-value]


_provenance_json = msgspec.json.Decoder(Provenance)


def _in_utc(p: Provenance) -> bool:
    """Complete and in UTC as stored: usable as decoded."""
    return bool(p.source) and p.ingest_ts.utcoffset() == _ZERO and (
        p.source_ts is None or p.source_ts.utcoffset() == _ZERO)


def provenance(raw: Mapping[str, Any] | str | None, source: str, as_of: datetime) -> Provenance:
    """A provenance object from a read-model `provenance` column (decoded, or as JSON text when
    the query selected `::text`, which decodes straight into the struct); missing members fall
    back to the row's own `source` and `as_of` so the object is always complete."""
    if isinstance(raw, str):
        return _from_text(raw, source, as_of)
    return _from_value(raw, source, as_of)


@lru_cache(maxsize=8192)
def _from_text(raw: str, source: str, as_of: datetime) -> Provenance:
    """Memoised by the column's text: list pages repeat the same teams and hot games, and the
    result is only ever encoded, never changed, so one instance can be shared."""
    try:  # no intermediate dict
        fast = _provenance_json.decode(raw)
        if _in_utc(fast):
            return fast
    except msgspec.DecodeError:  # not JSON, or not a complete provenance (ValidationError)
        pass
    try:
        value = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        value = None
    return _from_value(value, source, as_of)


def _from_value(raw: Any, source: str, as_of: datetime) -> Provenance:
    if isinstance(raw, Mapping):
        try:  # the usual case, complete and in UTC: one conversion in C
            fast = msgspec.convert(raw, Provenance)
            if _in_utc(fast):
                return fast
        except msgspec.ValidationError:
            pass
    raw = raw if isinstance(raw, Mapping) else {}
    known = []
    for item in raw.get("known_by") or ():
        if isinstance(item, Mapping) and item.get("source") and item.get("source_id") is not None:
            known.append(KnownBy(source=str(item["source"]), source_id=str(item["source_id"])))
    return Provenance(
        source=str(raw.get("source") or source),
        # a stored null says the source gave no time: kept null, not filled in
        source_ts=None if "source_ts" in raw and raw["source_ts"] is None else _ts(raw.get("source_ts"), as_of),
        ingest_ts=_ts(raw.get("ingest_ts"), as_of),
        known_by=known,
    )


def stored_provenance(p: SourceTimes) -> Provenance:
    """A record's provenance (schemas.read_models) as served: the same members, in UTC, with
    every source's own ID when the record keeps them (`KnownProvenance`)."""
    return Provenance(source=p.source, source_ts=utc(p.source_ts), ingest_ts=utc(p.ingest_ts),  # type: ignore[arg-type]
                      known_by=getattr(p, "known_by", []))


def attribution_for(sources: Iterable[str]) -> str | None:
    """The attribution lines the given sources require, joined; None when none does."""
    lines: list[str] = []
    for source in sources:
        lowered = source.lower()
        for needle, line in _ATTRIBUTIONS:
            if needle in lowered and line not in lines:
                lines.append(line)
    return "; ".join(lines) or None


def joined_source(sources: Iterable[str]) -> str:
    """One `source` for a value built from several: the distinct names in first-seen order."""
    seen = list(dict.fromkeys(s for s in sources if s))
    return ", ".join(seen) if seen else ENGINE_SOURCE


def team_ref(
    team_id: str, name: str | None, abbreviation: str | None, competition: str | None,
    prov: Mapping[str, Any] | None, source: str | None, as_of: datetime | None,
    fallback_source: str, fallback_as_of: datetime,
) -> TeamRef:
    """A team object from joined team columns; a team the projector has not written yet
    still gets a complete object (named by its ID) rather than breaking the game."""
    return TeamRef(
        id=team_id,
        name=name or team_id,
        abbreviation=abbreviation,
        competition=competition,
        provenance=provenance(prov, source or fallback_source, as_of or fallback_as_of),
    )
