"""Games: identity and schedule (newest value per field), and the live state (newest wins)."""

from __future__ import annotations

import msgspec

from projections.deltas import GAME_STATE, Delta, game_data, game_visible
from projections.event_time import iso_date, to_us
from projections.reducers.common import earliest, merge_fields, origin_of, union_known_by
from projections.state import GameState, Play
from schemas.events import GameRescheduled, GameScheduled, GameStateChanged
from schemas.reference import untimed_result
from schemas.wire import game_topic


def _kickoff(event) -> list | None:
    """[kickoff_at µs, kickoff_date ISO] set together (a time clears a date-only kickoff). A
    list, as a stored state part decodes it."""
    if event.kickoff_at is None and event.kickoff_date is None:
        return None
    return [None if event.kickoff_at is None else to_us(event.kickoff_at), iso_date(event.kickoff_date)]


def _scheduled(game: GameState, e: GameScheduled) -> GameState:
    origin = origin_of(e)
    fields = merge_fields(
        game.fields,
        {
            "name": e.name, "sport": e.sport, "competition": e.competition, "season": e.season,
            "week": e.week, "season_type": e.season_type, "home_team_id": e.home_team_id,
            "away_team_id": e.away_team_id, "kickoff": _kickoff(e), "venue": e.venue,
            "neutral_site": e.neutral_site,
        },
        origin.stamp,
    )
    first = earliest(game.origin, origin)
    known_by = union_known_by(game.known_by, e.known_by)
    as_of = max(game.as_of, origin.source_ts)
    if fields is game.fields and first is game.origin and known_by is game.known_by and as_of == game.as_of:
        return game  # a duplicate, or nothing newer
    return msgspec.structs.replace(game, fields=fields, origin=first, known_by=known_by, as_of=as_of)


def _rescheduled(game: GameState, e: GameRescheduled) -> GameState:
    origin = origin_of(e)
    fields = merge_fields(game.fields, {"kickoff": _kickoff(e), "venue": e.venue}, origin.stamp)
    as_of = max(game.as_of, origin.source_ts)
    if fields is game.fields and as_of == game.as_of:
        return game
    return msgspec.structs.replace(game, fields=fields, as_of=as_of)


def _state_changed(game: GameState, e: GameStateChanged) -> GameState:
    origin = origin_of(e)
    if game.play is not None and game.play.origin.stamp >= origin.stamp:
        return game  # older (or the same) report: the newest state stands
    play = Play(e.status, e.score_home, e.score_away, e.period, e.clock, e.possession, e.last_play, origin)
    # a result whose source gives no time is as of when we read it (schemas.reference.untimed_result)
    at = origin.ingest_ts if untimed_result(origin.source) else origin.source_ts
    return msgspec.structs.replace(game, play=play, as_of=max(game.as_of, at))


_APPLY = {GameScheduled: _scheduled, GameRescheduled: _rescheduled, GameStateChanged: _state_changed}


def reduce_game(state: GameState | None, event) -> tuple[GameState, list[Delta]]:
    game = state if state is not None else GameState(event.game_id)
    new = _APPLY[type(event)](game, event)
    if new is game:
        return game, []
    before = game_visible(game)
    after = game_visible(new)
    if after == before:
        return new, []
    seq = new.seq + 1
    new = msgspec.structs.replace(new, seq=seq)
    # a result whose source gives no time is sent as of when we read it, never its ordering time
    untimed = isinstance(event, GameStateChanged) and untimed_result(event.source)
    at = to_us(event.ingest_ts if untimed else event.source_ts)
    delta = Delta(game_topic(new.game_id), GAME_STATE, seq, at, event.source, game_data, new)
    return new, [delta]
