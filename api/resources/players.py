"""The player resource: identity, availability, injury, news and stat lines."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

import msgspec

from api.resources.common import (
    Meta, Provenance, TeamRef, attribution_for, joined_source, stored_provenance, team_ref, utc,
)
from api.resources.stats import StatLine, stat_line, stat_record
from schemas.read_model_tables import AvailabilityRecord, InjuryRecord, NewsRecord, PlayerRecord
from schemas.read_models import StatLineRecord, record

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


def _as(model: type, row: Any) -> Any:
    """A row read with its model's columns as the record (a record passes as it is)."""
    return row if isinstance(row, model) else record(model, row)


def _availability(row: AvailabilityRecord | Mapping[str, Any]) -> Availability:
    a: AvailabilityRecord = _as(AvailabilityRecord, row)
    return Availability(status=a.status, game_id=a.game_id, season=a.season, week=a.week,
                        provenance=stored_provenance(a.provenance))


_GAME_DAY = {"active", "inactive", "out"}


def _injury(row: InjuryRecord | Mapping[str, Any]) -> Injury:
    i: InjuryRecord = _as(InjuryRecord, row)
    game_day = (i.game_day or "").lower() or None
    return Injury(
        status=i.status, roster_status=i.roster_status, detail=i.detail, practice=i.practice,
        game_day=game_day if game_day in _GAME_DAY else None,  # type: ignore[arg-type]
        season=i.season, week=i.week, reported_at=utc(i.reported_at), provenance=stored_provenance(i.provenance),
    )


_NEWS_KINDS = {"injury", "transaction", "news"}


def _news(row: NewsRecord | Mapping[str, Any]) -> NewsItem:
    n: NewsRecord = _as(NewsRecord, row)
    return NewsItem(
        kind=n.kind if n.kind in _NEWS_KINDS else "news",  # type: ignore[arg-type]
        headline=_one_line(n.headline), published_at=utc(n.published_at), provenance=stored_provenance(n.provenance),
    )


def player(
    row: Mapping[str, Any], availability: Sequence[AvailabilityRecord | Mapping[str, Any]],
    injury: InjuryRecord | Mapping[str, Any] | None, news: Sequence[NewsRecord | Mapping[str, Any]],
    season_rows: Sequence[StatLineRecord | Mapping[str, Any]], game_rows: Sequence[StatLineRecord | Mapping[str, Any]],
    request_id: str | None,
) -> Player:
    """The player from its row (its record's columns and its team's, api.queries.players) and
    the records of what is reported about it."""
    p: PlayerRecord = record(PlayerRecord, row)
    team = None
    if p.team_id:
        team = team_ref(
            p.team_id, row["team_name"], row["team_abbreviation"], row["team_competition"],
            row["team_provenance"], row["team_source"], row["team_as_of"], p.source, p.as_of,
        )
    states = [_as(AvailabilityRecord, a) for a in availability]
    report = None if injury is None else _as(InjuryRecord, injury)
    items = [_as(NewsRecord, n) for n in news]
    seasons, games = [stat_record(s) for s in season_rows], [stat_record(g) for g in game_rows]
    # the player record is as of its newest part; every part's source is credited
    parts = [(part.as_of, part.source) for part in (p, *states, *([report] if report else []), *items, *seasons, *games)]
    return Player(
        as_of=max(utc(at) for at, _ in parts), source=joined_source([p.source]), stale_after_ms=None,
        attribution=attribution_for(by for _, by in parts), request_id=request_id, live_topics=[], rg_line=None,
        id=p.id, name=p.name, sport=p.sport, position=p.position, team=team,
        availability=[_availability(a) for a in states],
        injury=_injury(report) if report else msgspec.UNSET,
        news=[_news(n) for n in items[:5]],
        season_lines=[stat_line(s) for s in seasons], game_lines=[stat_line(g) for g in games],
        provenance=stored_provenance(p.provenance),
    )
