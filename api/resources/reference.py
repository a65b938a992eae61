"""Sports and competitions with their seasons."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

import msgspec

from api.resources.common import Meta, attribution_for, utc


class CompetitionRef(msgspec.Struct, kw_only=True):
    id: str
    slug: str
    name: str


class Sport(Meta, kw_only=True, tag_field="object", tag="sport"):
    id: str
    slug: str
    name: str
    competitions: list[CompetitionRef]  # by slug


class Season(msgspec.Struct, kw_only=True):
    id: str
    label: str  # a year ("2024") or a two-year span ("2024-25")
    year: int | None
    starts_on: date | None
    ends_on: date | None


class Competition(Meta, kw_only=True, tag_field="object", tag="competition"):
    id: str
    slug: str
    name: str
    sport: str
    seasons: list[Season]  # newest first


def _meta(row: Mapping[str, Any], parts: Sequence[Mapping[str, Any]], request_id: str | None) -> dict[str, Any]:
    """Reference data is settled (no staleness hint) and touches no wagering."""
    return dict(
        as_of=max(utc(p["as_of"]) for p in (row, *parts)), source=row["source"], stale_after_ms=None,
        attribution=attribution_for([row["source"]]), request_id=request_id, live_topics=[], rg_line=None,
    )


def sport(row: Mapping[str, Any], competitions: Sequence[Mapping[str, Any]], request_id: str | None) -> Sport:
    return Sport(
        **_meta(row, competitions, request_id), id=row["id"], slug=row["slug"], name=row["name"],
        competitions=[CompetitionRef(id=c["id"], slug=c["slug"], name=c["name"]) for c in competitions],
    )


def competition(row: Mapping[str, Any], seasons: Sequence[Mapping[str, Any]], request_id: str | None) -> Competition:
    return Competition(
        **_meta(row, seasons, request_id), id=row["id"], slug=row["slug"], name=row["name"], sport=row["sport"],
        seasons=[
            Season(id=s["id"], label=s["label"], year=s["year"], starts_on=s["starts_on"], ends_on=s["ends_on"])
            for s in seasons
        ],
    )
