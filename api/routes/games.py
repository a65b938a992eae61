"""GET /v1/games and GET /v1/games/{game_id}."""

from __future__ import annotations

from typing import Annotated, Literal

from litestar import Request, get
from litestar.params import PathParameter, QueryParameter

from access.plans import READ_SCOPES
from api.conventions import encode_cursor, request_id
from api.problems import ProblemError
from api.read_cache import keeping, kept_parts, part_version
from api.queries import games as games_sql
from api.queries import markets as markets_sql
from api.queries import stats as stats_sql
from api.resources import examples
from api.resources.games import LIST_ITEMS, Game, GameDetail, game, game_detail, list_item_key, market_ref
from api.resources.lists import GameList
from api.resources.stats import stat_line
from api.routes._db import both, read_models, spare_connection
from api.routes._docs import responses
from api.routes._params import COMPETITION_REF, SEASON, Cursor, from_micros, id_pattern, page_limit, position, rfc3339, to_micros

# `scheduled`: still to come; `result_unknown`: its start has passed and no source reported on it
GameStatusFilter = Literal["scheduled", "live", "final", "postponed", "cancelled", "suspended", "result_unknown"]


@get(
    "/v1/games",
    summary="List games in kickoff order",
    description=(
        "Games in kickoff order (then by ID), with teams, state and score. Never sorted or filtered by a "
        "betting measure. List items carry no markets or box scores: get one game for those. `from` and "
        "`to` bound the kickoff (a game with only a date counts from the start of that day in its "
        "competition's time zone)."
    ),
    responses=responses(GameList, "A page of games.", examples.game_list()),
    # the page is kept by the version of these tables (api/read_cache.py); a `cmp_` filter reads competitions
    opt={"operation": "games.list", "scope": READ_SCOPES["game"], "price": 1, "read_tables": ("games", "teams", "competitions"),
         "changes_with_time": True},
    tags=["games-and-markets"],
)
async def list_games(
    request: Request,
    competition: Annotated[
        str | None, QueryParameter(min_length=1, max_length=40, pattern=COMPETITION_REF, description="Competition slug (e.g. `nfl`) or `cmp_` ID.")
    ] = None,
    season: Annotated[str | None, QueryParameter(pattern=SEASON, description="Season label: `2024` or `2024-25`.")] = None,
    week: Annotated[int | None, QueryParameter(ge=0, le=30, schema_extra={"minimum": 0}, description="Week of the season, 0 to 30.")] = None,
    status: Annotated[GameStatusFilter | None, QueryParameter(description="Game status.")] = None,
    kickoff_from: Annotated[
        str | None,
        QueryParameter(name="from", format="date-time", max_length=64, description="Kickoff at or after this RFC 3339 date-time."),
    ] = None,
    kickoff_to: Annotated[
        str | None, QueryParameter(name="to", format="date-time", max_length=64, description="Kickoff before this RFC 3339 date-time.")
    ] = None,
    limit: Annotated[int, page_limit(20, 50)] = 20,
    cursor: Cursor = None,
) -> GameList:
    starts, ends = rfc3339(kickoff_from, "from"), rfc3339(kickoff_to, "to")
    filters = {
        "competition": competition, "season": season, "week": week, "status": status,
        "from": starts.isoformat() if starts else None, "to": ends.isoformat() if ends else None,
    }
    pos = position(cursor, filters, int, str)
    after = (from_micros(pos[0]), pos[1]) if pos else None
    query = dict(competition=competition, season=season, week=week, status=status, kickoff_from=starts,
                 kickoff_to=ends, after=after, limit=limit + 1)
    kept = keeping(request)
    async with read_models(request) as (conn, schema):
        # Not listening: first the page's row versions; a page whose items were all built from
        # exactly these versions is served from them; otherwise the whole page is read again (one
        # snapshot). Listening, this runs only after a change the read cache heard of (it keeps
        # the page): a row has most likely changed, so the whole page is read at once, one round
        # trip instead of two while every client asking waits for this build.
        items = [None]
        if not kept:
            rows = await games_sql.list_games(conn, schema, versions_only=True, **query)
            items = [LIST_ITEMS.get(list_item_key(schema, r)) for r in rows[:limit]]
        if any(item is None for item in items):
            rows = await games_sql.list_games(conn, schema, **query)
            items = [_list_item(schema, r) for r in rows[:limit]]
    has_more = len(rows) > limit
    last = rows[limit - 1] if has_more else None
    next_cursor = encode_cursor(filters, [to_micros(last["kickoff_sort"]), last["id"]]) if last is not None else None
    rid = request_id(request)
    data = [LIST_ITEMS.for_request(item, rid) for item in items]
    return GameList(data=data, has_more=has_more, next_cursor=next_cursor)


def _list_item(schema: str, row) -> Game:
    key = list_item_key(schema, row)
    item = LIST_ITEMS.get(key)
    return item if item is not None else LIST_ITEMS.put(key, game(row, None))


@get(
    "/v1/games/{game_id:str}",
    summary="Get a game with its markets and box scores",
    description=(
        "The game with its markets by identity (get a market for its consensus prices) and box scores: "
        "`player_stats` (each player's line for this game) and `team_stats` (the team's line; where the "
        "source gives none, the sum of its players' counting stats). Carries `rg_line`."
    ),
    responses=responses(GameDetail, "The game.", examples.game_detail(), "not_found"),
    # the game is kept by the version of these tables (api/read_cache.py)
    opt={"operation": "games.get", "scope": READ_SCOPES["game"], "price": 1,
         "read_tables": ("games", "teams", "markets", "stat_lines"), "changes_with_time": True},
    tags=["games-and-markets"],
)
async def get_game(
    request: Request,
    game_id: Annotated[str, PathParameter(pattern=id_pattern("game"), description="`gm_` ID.")],
) -> GameDetail:
    # A game's box scores (player lines, team lines) are kept by the version of `stat_lines`, the
    # one table they read: during play a game is built again for every score and every price
    # (`games`, `markets`: several times a second), its box scores far less often, and the team
    # lines' sums over the players' lines were two of a build's four queries. The version is read
    # before the rows, as the read cache reads its own: kept under a version they may be older
    # than, never newer.
    #
    # The game's row and its markets (and the two box score queries) are read side by side on a
    # spare connection when one is idle: a kept game is built after every change to a price, and
    # every client asking for it meanwhile waits for that build, so its queries' round trips one
    # after another were that wait.
    box_version = part_version(request, ("stat_lines",))
    parts = kept_parts(request)
    box = parts.get(("box_scores", box_version, game_id)) if box_version is not None else None
    async with read_models(request) as (conn, schema), spare_connection(request) as spare:
        # without a spare, the markets are read before a missing game is known: one wasted query
        # on a 404, for one way through
        other, apart = (spare, True) if spare is not None else (conn, False)
        row, markets = await both(games_sql.get_game(conn, schema, game_id),
                                  markets_sql.markets_of_games(other, schema, [game_id]), apart=apart)
        if row is None:
            raise ProblemError("not_found", f"No game with ID {game_id}.", param="game_id")
        if box is None:
            players, teams = await both(stats_sql.player_box_scores(conn, schema, game_id),
                                        stats_sql.team_box_scores(other, schema, game_id), apart=apart)
            box = ([stat_line(p) for p in players], [stat_line(t) for t in teams])
            if box_version is not None:
                parts.put(("box_scores", box_version, game_id), box)
    return game_detail(row, [market_ref(m) for m in markets], *box, request_id(request))


ROUTES = [list_games, get_game]
