"""Game resources: list items, slate items (with markets by identity) and the
game detail (with markets and box scores)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from typing import Any, Literal

import msgspec

from api.conventions import RG_LINE
from api.resources.common import Meta, Provenance, TeamRef, attribution_for, provenance, team_ref, utc
from api.resources.freshness import game_stale_after_ms
from api.resources.stats import StatLine
from api.kept import Versioned
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
    kind: Literal["game", "prop", "future", "exchange"]
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


def market_ref(row: Mapping[str, Any]) -> MarketRef:
    return MarketRef(
        id=row["id"], kind=row["kind"], type=row["type"], period=row["period"],
        participant_id=row["participant_id"], name=row["name"],
        provenance=provenance(row["provenance"], row["source"], row["as_of"]),
    )


def _game_fields(row: Mapping[str, Any], request_id: str | None) -> dict[str, Any]:
    """The members every game shape shares, from a `games` row joined with its two teams."""
    as_of: datetime = row["as_of"]
    source: str = row["source"]
    status = row["status"] if row["status"] in _STATUSES else "scheduled"
    score = None
    if row["score_home"] is not None or row["score_away"] is not None:
        score = Score(home=row["score_home"], away=row["score_away"])
    game_provenance = provenance(row["provenance"], source, as_of)
    state_provenance = (
        provenance(row["state_provenance"], source, as_of) if row["state_provenance"] else game_provenance
    )
    teams = {}
    for side in ("home", "away"):
        teams[side] = team_ref(
            row[f"{side}_team_id"], row[f"{side}_name"], row[f"{side}_abbreviation"],
            row[f"{side}_competition"], row[f"{side}_provenance"], row[f"{side}_source"],
            row[f"{side}_as_of"], source, as_of,
        )
    return dict(
        as_of=utc(as_of), source=source, stale_after_ms=game_stale_after_ms(status),
        attribution=attribution_for([source]), request_id=request_id,
        id=row["id"], name=row["name"], competition=row["competition"], sport=row["sport"],
        season=row["season"], week=row["week"], season_type=row["season_type"],
        kickoff_at=utc(row["kickoff_at"]), kickoff_date=row["kickoff_date"] if row["kickoff_at"] is None else None,
        venue=row["venue"], status=status, score=score, period=row["period"], clock=row["clock"],
        possession=row["possession"], last_play=row["last_play"], state_provenance=state_provenance,
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
