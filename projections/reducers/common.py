"""Helpers every reducer shares: provenance of an event, and newest-wins field merging."""

from __future__ import annotations

from typing import Any, Iterable, Mapping, TypeVar

from projections.event_time import Stamp, to_us
from projections.state import Fields, KnownBy, Origin


T = TypeVar("T")


class Owned:
    """Objects the current fold made and only its working state refers to: a reducer may change
    these in place instead of copying them (copy-on-write, per batch). States are immutable
    outside a fold; inside one, a key touched many times is copied on its first touch only.
    Anything a batch keeps apart from the working state (its start states, its deltas) must
    never be one of these. Owned objects are held until the fold ends, so ids stay unique."""

    def __init__(self) -> None:
        self._ids: set[int] = set()
        self._held: list[object] = []

    def add(self, obj: T) -> T:
        self._ids.add(id(obj))
        self._held.append(obj)
        return obj

    def has(self, obj: object) -> bool:
        return id(obj) in self._ids

    def disown(self, obj: object) -> None:
        """`obj` now has a second parent (its container was copied): copy it before changing it."""
        self._ids.discard(id(obj))


def origin_of(event) -> Origin:
    return origin_from(event.source, event.source_ts, event.ingest_ts, event.event_id)


def origin_from(source: str, source_ts: Any, ingest_ts: Any, event_id: str) -> Origin:
    """`origin_of` from an event's fields already at hand (a quote's `astuple`)."""
    return Origin(source, to_us(source_ts), to_us(ingest_ts), event_id)


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
    if current is None:
        return candidate
    # candidate.stamp < current.stamp, without building the tuples (this runs for every quote),
    # each time read once (a struct's attribute is a generic lookup from compiled code)
    ts, current_ts = candidate.source_ts, current.source_ts
    if ts < current_ts or (ts == current_ts and candidate.event_id < current.event_id):
        return candidate
    return current


def union_known_by(current: KnownBy, extra: Iterable) -> KnownBy:
    pairs = {(k.source, k.source_id) for k in extra}
    if not pairs or pairs <= set(current):
        return current
    return tuple(sorted(set(current) | pairs))
