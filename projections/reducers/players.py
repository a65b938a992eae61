"""Players: identity (newest value per field), the current injury report, the latest status
per source, the five newest news items, and per-game stat lines (season lines derive from them)."""

from __future__ import annotations

import msgspec

from projections.event_time import opt_us
from projections.reducers.common import earliest, merge_fields, origin_of, union_known_by
from projections.state import Availability, GameLine, InjuryReport, NewsItem, PlayerState
from schemas.events import InjuryReported, NewsPublished, PlayerRegistered, PlayerUpdated, StatLineRecorded

NEWS_KEPT = 5


def _registered(p: PlayerState, e: PlayerRegistered) -> PlayerState:
    origin = origin_of(e)
    fields = merge_fields(
        p.fields,
        {"name": e.name, "sport": e.sport, "competition": e.competition, "position": e.position, "team_id": e.team_id},
        origin.stamp,
    )
    first = earliest(p.origin, origin)
    known_by = union_known_by(p.known_by, e.known_by)
    as_of = max(p.as_of, origin.source_ts)
    if fields is p.fields and first is p.origin and known_by is p.known_by and as_of == p.as_of:
        return p
    return msgspec.structs.replace(p, fields=fields, origin=first, known_by=known_by, as_of=as_of)


def _updated(p: PlayerState, e: PlayerUpdated) -> PlayerState:
    origin = origin_of(e)
    fields = merge_fields(p.fields, {"name": e.name, "position": e.position, "team_id": e.team_id}, origin.stamp)
    as_of = max(p.as_of, origin.source_ts)
    if fields is p.fields and as_of == p.as_of:
        return p
    return msgspec.structs.replace(p, fields=fields, as_of=as_of)


def availability_status(e: InjuryReported) -> str | None:
    """The status in words, lower case: the designation, else the game-day or roster status."""
    for value in (e.status, e.game_day, e.roster_status):
        if value:
            return value.strip().lower()
    return None


def _injury(p: PlayerState, e: InjuryReported) -> PlayerState:
    origin = origin_of(e)
    # a later week's report supersedes an earlier one; within a week the newest version wins
    order = (e.season, -1 if e.week is None else e.week, origin.source_ts, origin.event_id)
    injury = p.injury
    if injury is None or order > injury.order:
        injury = InjuryReport(
            order, e.team_id, e.status, e.roster_status, e.detail, e.secondary_detail, e.practice, e.game_day,
            e.season, e.week, e.game_id, opt_us(e.reported_at), origin,
        )
    availability = p.availability
    status = availability_status(e)
    current = availability.get(e.source)
    if status is not None and (current is None or order > current.order):
        availability = {**availability, e.source: Availability(order, status, e.game_id, e.season, e.week, origin)}
        availability = dict(sorted(availability.items()))
    if injury is p.injury and availability is p.availability:
        return p
    return msgspec.structs.replace(p, injury=injury, availability=availability)


def _news(p: PlayerState, e: NewsPublished) -> PlayerState:
    origin = origin_of(e)
    published = opt_us(e.published_at)
    item = NewsItem(
        (origin.source_ts if published is None else published, origin.event_id), e.kind, e.headline, published, origin
    )
    if any(n.order == item.order for n in p.news):
        return p
    if len(p.news) >= NEWS_KEPT and item.order < p.news[-1].order:
        return p  # older than every item kept
    news = tuple(sorted((*p.news, item), key=lambda n: n.order, reverse=True)[:NEWS_KEPT])
    return msgspec.structs.replace(p, news=news)


def game_line_id(e: StatLineRecorded) -> str:
    """One line per source and game (the week stands in when the source names no game)."""
    week = "" if e.week is None else str(e.week)
    return "|".join((e.source, e.season, e.season_type or "", week, e.game_id or ""))


def _stat_line(p: PlayerState, e: StatLineRecorded) -> PlayerState:
    origin = origin_of(e)
    key = game_line_id(e)
    current = p.lines.get(key)
    if current is not None and current.origin.stamp >= origin.stamp:
        return p
    line = GameLine(e.team_id, e.game_id, e.season, e.week, e.season_type, dict(sorted(e.stats.items())), origin)
    lines = {**p.lines, key: line}
    if current is None:
        lines = dict(sorted(lines.items()))
    return msgspec.structs.replace(p, lines=lines)


_APPLY = {
    PlayerRegistered: _registered, PlayerUpdated: _updated, InjuryReported: _injury,
    NewsPublished: _news, StatLineRecorded: _stat_line,
}


def reduce_player(state: PlayerState | None, event) -> tuple[PlayerState, list]:
    player = state if state is not None else PlayerState(event.player_id)
    return _APPLY[type(event)](player, event), []
