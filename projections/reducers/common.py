"""Helpers every reducer shares: provenance of an event, and newest-wins field merging."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from projections.event_time import Stamp, to_us
from projections.state import Fields, KnownBy, Origin


def origin_of(event) -> Origin:
    return Origin(event.source, to_us(event.source_ts), to_us(event.ingest_ts), event.event_id)


def merge_fields(fields: Fields, updates: Mapping[str, Any], stamp: Stamp) -> Fields:
    """Each field takes the value of the newest event that gave one (None gives nothing), so
    the result is the same whatever order the events came in."""
    changed = None
    for name, value in updates.items():
        if value is None:
            continue
        current = fields.get(name)
        if current is not None and current[1] >= stamp:
            continue
        if changed is None:
            changed = dict(fields)
        changed[name] = (value, stamp)
    return fields if changed is None else changed


def earliest(current: Origin | None, candidate: Origin) -> Origin:
    """The identity origin: the least-stamped event that introduced the entity."""
    if current is None or candidate.stamp < current.stamp:
        return candidate
    return current


def union_known_by(current: KnownBy, extra: Iterable) -> KnownBy:
    pairs = {(k.source, k.source_id) for k in extra}
    if not pairs or pairs <= set(current):
        return current
    return tuple(sorted(set(current) | pairs))
