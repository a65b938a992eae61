"""GET /v1/markets?game_id=… (a game's markets) and GET /v1/markets/{market_id}.

The detail record (ours to design) is described in docs/api.md: consensus prices, no-vig
probabilities under the `devig` method asked for, hold, overround and book counts for the main
and the alternate lines, the formula card used and `rg_line`. Never a book's price."""

from __future__ import annotations

from typing import Annotated

from litestar import Request, get
from litestar.params import PathParameter, QueryParameter

from access.plans import READ_SCOPES
from api.conventions import encode_cursor, request_id
from api.problems import ProblemError
from api.queries import games as games_sql
from api.queries import markets as markets_sql
from api.resources import examples
from api.resources.lists import MarketList
from api.resources.markets import DevigMethod, MarketDetail, market, market_detail
from api.kept import Versioned
from api.routes._db import read_models
from api.routes._docs import responses
from api.routes._params import MARKET_TYPE, Cursor, id_pattern, page_limit, position
from domain import formula_cards as cards
from domain.devig import DEFAULT_METHOD
from schemas.events import MarketKind

# market details by devig method and the versions of the market's, its game's and its lines' rows
DETAILS: Versioned[MarketDetail] = Versioned()


def devig_card(method: str) -> str:
    """The formula card reference `devig.<method>@<version>` from the odds maths' registry."""
    return cards.ref(f"devig.{method}")


@get(
    "/v1/markets",
    summary="List a game's markets",
    description=(
        "The markets of one game by identity and state, in registry order (kind, type, period, "
        "participant); never by a betting measure. Get a market for its consensus prices and no-vig "
        "probabilities. An unknown `game_id` is 404 `not_found`. Carries `rg_line`."
    ),
    responses=responses(MarketList, "A page of the game's markets.", examples.market_list(), "not_found"),
    opt={"operation": "markets.list", "scope": READ_SCOPES["market"], "price": 1},
    tags=["games-and-markets"],
)
async def list_markets(
    request: Request,
    game_id: Annotated[str, QueryParameter(pattern=id_pattern("game"), description="`gm_` ID of the game (required).")],
    kind: Annotated[
        MarketKind | None, QueryParameter(description="Market kind.")
    ] = None,
    market_type: Annotated[
        str | None, QueryParameter(name="type", pattern=MARKET_TYPE, description="Market type: `h2h`, `spreads`, `totals` or a prop type.")
    ] = None,
    period: Annotated[str | None, QueryParameter(pattern=MARKET_TYPE, description="Period: `full`, `h1`, `q1`, ...")] = None,
    limit: Annotated[int, page_limit(20, 50)] = 20,
    cursor: Cursor = None,
) -> MarketList:
    filters = {"game_id": game_id, "kind": kind, "type": market_type, "period": period}
    after = position(cursor, filters, str, str, str, str, str)
    async with read_models(request) as (conn, schema):
        rows = await markets_sql.list_markets(
            conn, schema, game_id=game_id, kind=kind, market_type=market_type, period=period, after=after,
            limit=limit + 1,
        )
        if not rows and after is None and not await games_sql.game_exists(conn, schema, game_id):
            raise ProblemError("not_found", f"No game with ID {game_id}.", param="game_id")
    has_more = len(rows) > limit
    rows = rows[:limit]
    next_cursor = None
    if has_more:
        last = rows[-1]
        next_cursor = encode_cursor(
            filters, [last["kind"], last["type"], last["period"], last["participant_id"] or "", last["id"]]
        )
    rid = request_id(request)
    return MarketList(data=[market(r, rid) for r in rows], has_more=has_more, next_cursor=next_cursor)


@get(
    "/v1/markets/{market_id:str}",
    summary="Get a market with consensus prices and no-vig probabilities",
    description=(
        "Per line (the main line, then alternate lines by point) and per outcome: the consensus price "
        "(median decimal price across eligible books, with American odds), the consensus no-vig "
        "probability under the `devig` method (median of the books' no-vig probabilities, renormalised) "
        "and its fair price; per line the hold, overround and number of books. Numbers are at full "
        "precision; `*_display` strings are rounded for people. Cites the formula card used. Never a "
        "per-book price. Carries `rg_line`."
    ),
    responses=responses(MarketDetail, "The market.", examples.market_detail(), "not_found"),
    # the detail is kept by the version of these tables (api/read_cache.py)
    opt={"operation": "markets.get", "scope": READ_SCOPES["market"], "price": 1, "read_tables": ("markets", "games", "market_lines"),
         "changes_with_time": True},
    tags=["games-and-markets"],
)
async def get_market(
    request: Request,
    market_id: Annotated[str, PathParameter(pattern=id_pattern("market"), description="`mkt_` ID.")],
    devig: Annotated[
        DevigMethod, QueryParameter(description=f"Margin-removal method for the no-vig probabilities; default `{DEFAULT_METHOD}`.")
    ] = DEFAULT_METHOD,  # type: ignore[assignment]
) -> MarketDetail:
    item = None
    async with read_models(request) as (conn, schema):
        # first the versions of the rows the detail is built from; whole rows only when new
        versions = await markets_sql.market_versions(conn, schema, market_id)
        if versions is not None:
            key = (schema, market_id, devig, versions["m_version"], versions["g_version"], versions["game_status"],
                   tuple(versions["l_versions"] or ()))
            item = DETAILS.get(key)
            if item is None:
                # rows changed after the versions were read are kept under the older key, where
                # only a read that began before that change (and may show it) finds them
                row = await markets_sql.get_market(conn, schema, market_id)
                if row is not None:
                    lines = await markets_sql.market_lines(conn, schema, market_id)
                    item = DETAILS.put(key, market_detail(row, lines, devig, devig_card(devig), None))
    if item is None:
        raise ProblemError("not_found", f"No market with ID {market_id}.", param="market_id")
    return DETAILS.for_request(item, request_id(request))


ROUTES = [list_markets, get_market]
