"""The player resource: identity, availability, injury, news and stat lines."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

import msgspec

from api.resources.common import Meta, Provenance, TeamRef, attribution_for, joined_source, provenance, team_ref, utc
from api.resources.stats import StatLine, stat_line, stat_record
from schemas.read_models import StatLineRecord

HEADLINE_MAX = 200


class Availability(msgspec.Struct, kw_only=True):
    status: str  # out, doubtful, questionable, ...
    game_id: str | None
    season: str | int | None
    week: int | None
    provenance: Provenance


class Injury(msgspec.Struct, kw_only=True):
    status: str | None  # the designation in words
    roster_status: str | None
    detail: str | None
    practice: str | None
    game_day: Literal["active", "inactive", "out"] | None
    season: str | int | None
    week: int | None
    reported_at: datetime | None
    provenance: Provenance


class NewsItem(msgspec.Struct, kw_only=True):
    kind: Literal["injury", "transaction", "news"]
    headline: str  # one line, at most 200 characters
    published_at: datetime | None
    provenance: Provenance


class Player(Meta, kw_only=True, tag_field="object", tag="player"):
    id: str
    name: str
    sport: str | None
    position: str | None
    team: TeamRef | None  # current team when known
    availability: list[Availability]
    # absent when the player is on no current report
    injury: Injury | msgspec.UnsetType = msgspec.UNSET
    news: list[NewsItem]  # newest first, at most 5
    season_lines: list[StatLine]  # newest season first
    game_lines: list[StatLine]  # the latest game's lines, by source
    provenance: Provenance


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= HEADLINE_MAX else line[: HEADLINE_MAX - 1] + "…"


def _availability(row: Mapping[str, Any]) -> Availability:
    return Availability(
        status=row["status"], game_id=row["game_id"], season=row["season"], week=row["week"],
        provenance=provenance(row["provenance"], row["source"], row["as_of"]),
    )


_GAME_DAY = {"active", "inactive", "out"}


def _injury(row: Mapping[str, Any]) -> Injury:
    game_day = (row["game_day"] or "").lower() or None
    return Injury(
        status=row["status"], roster_status=row["roster_status"], detail=row["detail"],
        practice=row["practice"], game_day=game_day if game_day in _GAME_DAY else None,
        season=row["season"], week=row["week"], reported_at=utc(row["reported_at"]),
        provenance=provenance(row["provenance"], row["source"], row["as_of"]),
    )


_NEWS_KINDS = {"injury", "transaction", "news"}


def _news(row: Mapping[str, Any]) -> NewsItem:
    return NewsItem(
        kind=row["kind"] if row["kind"] in _NEWS_KINDS else "news",
        headline=_one_line(row["headline"]),
        published_at=utc(row["published_at"]),
        provenance=provenance(row["provenance"], row["source"], row["as_of"]),
    )


def player(
    row: Mapping[str, Any], availability: Sequence[Mapping[str, Any]], injury: Mapping[str, Any] | None,
    news: Sequence[Mapping[str, Any]], season_rows: Sequence[StatLineRecord | Mapping[str, Any]],
    game_rows: Sequence[StatLineRecord | Mapping[str, Any]], request_id: str | None,
) -> Player:
    source, as_of = row["source"], row["as_of"]
    team = None
    if row["team_id"]:
        team = team_ref(
            row["team_id"], row["team_name"], row["team_abbreviation"], row["team_competition"],
            row["team_provenance"], row["team_source"], row["team_as_of"], source, as_of,
        )
    seasons, games = [stat_record(s) for s in season_rows], [stat_record(g) for g in game_rows]
    # the player record is as of its newest part; every part's source is credited
    parts = [(p["as_of"], p["source"]) for p in (row, *availability, *([injury] if injury else []), *news)]
    parts += [(line.as_of, line.source) for line in (*seasons, *games)]
    return Player(
        as_of=max(utc(at) for at, _ in parts), source=joined_source([source]), stale_after_ms=None,
        attribution=attribution_for(by for _, by in parts), request_id=request_id, live_topics=[], rg_line=None,
        id=row["id"], name=row["name"], sport=row["sport"], position=row["position"], team=team,
        availability=[_availability(a) for a in availability],
        injury=_injury(injury) if injury else msgspec.UNSET,
        news=[_news(n) for n in news[:5]],
        season_lines=[stat_line(s) for s in seasons], game_lines=[stat_line(g) for g in games],
        provenance=provenance(row["provenance"], source, as_of),
    )
