"""GET /v1/sports: every sport on one page, by slug, with its competitions."""

from __future__ import annotations

from litestar import Request, get

from access.plans import READ_SCOPES
from api.conventions import request_id
from api.queries import reference as reference_sql
from api.resources import examples
from api.resources.lists import SportList
from api.resources.reference import sport
from api.routes._db import read_models
from api.routes._docs import responses


@get(
    "/v1/sports",
    summary="List sports",
    description="Every sport on one page, by slug, each with its competitions (by slug). No parameters.",
    responses=responses(SportList, "All sports.", examples.sport_list()),
    opt={"operation": "sports.list", "scope": READ_SCOPES["reference"], "price": 1},
    tags=["reference"],
)
async def list_sports(request: Request) -> SportList:
    async with read_models(request) as (conn, schema):
        rows = await reference_sql.sports(conn, schema)
        competitions = await reference_sql.competitions_of_sports(conn, schema)
    by_sport: dict[str, list] = {}
    for c in competitions:
        by_sport.setdefault(c["sport"], []).append(c)
    rid = request_id(request)
    return SportList(data=[sport(r, by_sport.get(r["slug"], []), rid) for r in rows], has_more=False, next_cursor=None)


ROUTES = [list_sports]
