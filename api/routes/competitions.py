"""GET /v1/competitions: competitions by slug, each with its seasons newest first."""

from __future__ import annotations

from typing import Annotated

from litestar import Request, get
from litestar.params import QueryParameter

from access.plans import READ_SCOPES
from api.conventions import encode_cursor, request_id
from api.queries import reference as reference_sql
from api.resources import examples
from api.resources.lists import CompetitionList
from api.resources.reference import competition
from api.routes._db import read_models
from api.routes._docs import responses
from api.routes._params import SLUG, Cursor, page_limit, position


@get(
    "/v1/competitions",
    summary="List competitions",
    description="Competitions by slug, each with its seasons newest first. Filter by `sport` slug.",
    responses=responses(CompetitionList, "A page of competitions.", examples.competition_list()),
    opt={"operation": "competitions.list", "scope": READ_SCOPES["reference"], "price": 1},
    tags=["reference"],
)
async def list_competitions(
    request: Request,
    sport: Annotated[str | None, QueryParameter(pattern=SLUG, description="Sport slug, e.g. `soccer`.")] = None,
    limit: Annotated[int, page_limit(20, 50)] = 20,
    cursor: Cursor = None,
) -> CompetitionList:
    filters = {"sport": sport}
    pos = position(cursor, filters, str)
    async with read_models(request) as (conn, schema):
        rows = await reference_sql.competitions(
            conn, schema, sport=sport, after=pos[0] if pos else None, limit=limit + 1,
        )
        has_more = len(rows) > limit
        rows = rows[:limit]
        seasons = await reference_sql.seasons(conn, schema, [r["slug"] for r in rows])
    by_competition: dict[str, list] = {}
    for s in seasons:
        by_competition.setdefault(s["competition"], []).append(s)
    rid = request_id(request)
    return CompetitionList(
        data=[competition(r, by_competition.get(r["slug"], []), rid) for r in rows],
        has_more=has_more,
        next_cursor=encode_cursor(filters, [rows[-1]["slug"]]) if has_more else None,
    )


ROUTES = [list_competitions]
