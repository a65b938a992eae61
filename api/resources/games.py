"""Game resources: list items, slate items (with markets by identity) and the
game detail (with markets and box scores)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from typing import Any, Literal

import msgspec

from api.conventions import RG_LINE
from api.resources.common import (
    Meta, Provenance, TeamRef, attribution_for, stored_provenance, team_ref, utc,
)
from api.resources.freshness import game_stale_after_ms
from api.resources.stats import StatLine
from api.kept import Versioned
from schemas.events import MarketKind
from schemas.read_models import GameRecord, MarketRecord, record
from schemas.wire import game_topic, market_topic

# the game status's open enum plus `result_unknown`: the start has passed and no source has reported on
# the game since its schedule (docs/api.md, "Game status"); `scheduled` is still to come
GameStatus = Literal["scheduled", "live", "final", "postponed", "cancelled", "suspended", "result_unknown"]
_STATUSES = {"scheduled", "live", "final", "postponed", "cancelled", "suspended", "result_unknown"}


class Score(msgspec.Struct, kw_only=True):
    home: int | None
    away: int | None


class MarketRef(msgspec.Struct, kw_only=True):
    """A market by identity (`markets`): what it is, not what it prices."""

    id: str
    kind: MarketKind
    type: str
    period: str
    participant_id: str | None
    name: str | None
    provenance: Provenance


class Game(Meta, kw_only=True, tag_field="object", tag="game"):
    """A game as listed: identity, schedule, teams and state; no markets or box scores."""

    id: str
    name: str
    competition: str | None
    sport: str | None
    season: str | None
    week: int | None
    season_type: str | None
    kickoff_at: datetime | None
    kickoff_date: date | None
    venue: str | None
    status: GameStatus
    score: Score | None
    period: str | None
    clock: str | None
    possession: str | None
    last_play: str | None
    state_provenance: Provenance
    home_team: TeamRef
    away_team: TeamRef
    provenance: Provenance


class SlateGame(Game, kw_only=True):
    """A slate item: the game with its markets by identity (no box scores)."""

    markets: list[MarketRef]


class GameDetail(Game, kw_only=True):
    """`GET /v1/games/{game_id}`: the game with its markets and box scores."""

    markets: list[MarketRef]
    player_stats: list[StatLine]
    team_stats: list[StatLine]


def market_ref(row: MarketRecord | Mapping[str, Any]) -> MarketRef:
    """A market by identity, from its record (or a `markets` row with the record's columns)."""
    m: MarketRecord = row if isinstance(row, MarketRecord) else record(MarketRecord, row)
    return MarketRef(
        id=m.id, kind=m.kind, type=m.type, period=m.period,  # type: ignore[arg-type]
        participant_id=m.participant_id, name=m.name, provenance=stored_provenance(m.provenance),
    )


def _game_fields(row: Mapping[str, Any], request_id: str | None) -> dict[str, Any]:
    """The members every game shape shares, from a `games` row (read as its record,
    `schemas.read_models.GameRecord`, with the status served against the clock) joined with its
    two teams."""
    g: GameRecord = record(GameRecord, row)
    status = g.status if g.status in _STATUSES else "scheduled"
    score = None
    if g.score_home is not None or g.score_away is not None:
        score = Score(home=g.score_home, away=g.score_away)
    game_provenance = stored_provenance(g.provenance)
    state_provenance = game_provenance if g.state_provenance is None else stored_provenance(g.state_provenance)
    teams = {}
    for side, team_id in (("home", g.home_team_id), ("away", g.away_team_id)):
        teams[side] = team_ref(
            team_id, row[f"{side}_name"], row[f"{side}_abbreviation"],
            row[f"{side}_competition"], row[f"{side}_provenance"], row[f"{side}_source"],
            row[f"{side}_as_of"], g.source, g.as_of,
        )
    return dict(
        as_of=utc(g.as_of), source=g.source, stale_after_ms=game_stale_after_ms(status),
        attribution=attribution_for([g.source]), request_id=request_id,
        id=g.id, name=g.name, competition=g.competition, sport=g.sport,
        season=g.season, week=g.week, season_type=g.season_type,
        kickoff_at=utc(g.kickoff_at), kickoff_date=g.kickoff_date if g.kickoff_at is None else None,
        venue=g.venue, status=status, score=score, period=g.period, clock=g.clock,
        possession=g.possession, last_play=g.last_play, state_provenance=state_provenance,
        home_team=teams["home"], away_team=teams["away"], provenance=game_provenance,
    )


def game(row: Mapping[str, Any], request_id: str | None) -> Game:
    """A game as listed, from its `games` row joined with its two teams."""
    return Game(**_game_fields(row, request_id), live_topics=[game_topic(row["id"])], rg_line=None)


# list items by the versions of a game's row and its two teams' rows (api.queries.games)
LIST_ITEMS: Versioned[Game] = Versioned()


def list_item_key(schema: str, row: Mapping[str, Any]) -> tuple:
    # the served status is decided against the clock (api.queries.games), not by the row alone
    return (schema, row["id"], row["g_version"], row["h_version"], row["a_version"], row["status"])


def _with_markets(row: Mapping[str, Any], markets: list[MarketRef]) -> dict[str, Any]:
    """A game served with its markets touches wagering: the cost line always rides along,
    and each market's Wire topic is listed beside the game's."""
    return dict(
        live_topics=[game_topic(row["id"]), *(market_topic(m.id) for m in markets)],
        rg_line=RG_LINE,
        markets=markets,
    )


def slate_game(row: Mapping[str, Any], markets: list[MarketRef], request_id: str | None) -> SlateGame:
    return SlateGame(**_game_fields(row, request_id), **_with_markets(row, markets))


def game_detail(
    row: Mapping[str, Any], markets: list[MarketRef], player_stats: list[StatLine],
    team_stats: list[StatLine], request_id: str | None,
) -> GameDetail:
    return GameDetail(
        **_game_fields(row, request_id), **_with_markets(row, markets),
        player_stats=player_stats, team_stats=team_stats,
    )
