"""GET /v1/players/{player_id}."""

from __future__ import annotations

from typing import Annotated

from litestar import Request, get
from litestar.params import PathParameter

from access.plans import READ_SCOPES
from api.conventions import request_id
from api.problems import ProblemError
from api.queries import players as players_sql
from api.queries import stats as stats_sql
from api.resources import examples
from api.resources.players import Player, player
from api.routes._db import read_models
from api.routes._docs import responses
from api.routes._params import id_pattern


@get(
    "/v1/players/{player_id:str}",
    summary="Get a player",
    description=(
        "Identity and current team; `availability` (the latest status per source); `injury` (the current "
        "report, absent when the player is on none); `news` (newest first, at most 5); `season_lines` "
        "(newest season first) and `game_lines` (the latest game's lines, by source). Injury and news are "
        "for American football. An unknown ID is 404 `not_found` with `param: player_id`."
    ),
    responses=responses(Player, "The player.", examples.player(), "not_found"),
    # the player is kept by the version of these tables (api/read_cache.py); of games only their kickoff
    # order (`games.kickoff`, infra/migrations/dataset/0150): which game is the latest, not its score
    opt={"operation": "players.get", "scope": READ_SCOPES["player"], "price": 1,
         "read_tables": ("players", "teams", "availability", "injuries", "news", "stat_lines", "games.kickoff")},
    tags=["players"],
)
async def get_player(
    request: Request,
    player_id: Annotated[str, PathParameter(pattern=id_pattern("player"), description="`plr_` ID.")],
) -> Player:
    async with read_models(request) as (conn, schema):
        row = await players_sql.get_player(conn, schema, player_id)
        if row is None:
            raise ProblemError("not_found", f"No player with ID {player_id}.", param="player_id")
        availability = await players_sql.availability(conn, schema, player_id)
        injury = await players_sql.injury(conn, schema, player_id)
        news = await players_sql.news(conn, schema, player_id)
        season = await stats_sql.season_lines(conn, schema, player_id)
        latest = await stats_sql.latest_game_lines(conn, schema, player_id)
    return player(row, availability, injury, news, season, latest, request_id(request))


ROUTES = [get_player]
