"""GET /v1/search: competitions, teams, players, games and library entries by name,
best match first; close spellings are found."""

from __future__ import annotations

from typing import Annotated, Literal

from litestar import Request, get
from litestar.params import QueryParameter

from access.plans import READ_SCOPES
from api.conventions import encode_cursor
from api.queries import search as search_sql
from api.resources import examples
from api.resources.lists import SearchResultList
from api.resources.search import REFERENCE_KINDS, search_result
from api.routes._db import read_models
from api.routes._docs import responses
from api.routes._params import COMPETITION_REF, Cursor, bad_cursor, page_limit, position, text

# how deep relevance paging goes: beyond this the query should be sharper
MAX_OFFSET = 1000


@get(
    "/v1/search",
    summary="Search competitions, teams, players, games and library entries",
    description=(
        "Best match first (trigram word similarity of `q` to each entity's names, then how close the whole "
        "name is), never by a betting measure. Close spellings are found (`Mahomse`, `Kanas City`). "
        "`kind=reference` means library entries. Each result has a small `context` per kind: player "
        "position and team; game teams, week and kickoff; team competition and abbreviation. Test-mode "
        "keys search the sandbox."
    ),
    responses=responses(SearchResultList, "A page of results.", examples.search_results()),
    # the page is kept by the version of these tables (api/read_cache.py): the index and the entities'
    # own read models its context comes from (a game's from its entry: api/queries/search.py)
    opt={"operation": "search", "scope": READ_SCOPES["reference"], "price": 1,
         "read_tables": ("search_index", "players", "teams", "competitions")},
    tags=["search"],
)
async def search(
    request: Request,
    q: Annotated[str, QueryParameter(min_length=1, max_length=200, description="What to look for, 1 to 200 characters.")],
    kind: Annotated[
        Literal["competition", "team", "player", "game", "reference"] | None,
        QueryParameter(description="Only results of this kind; `reference` means library entries."),
    ] = None,
    competition: Annotated[
        str | None, QueryParameter(min_length=1, max_length=40, pattern=COMPETITION_REF, description="Competition slug or `cmp_` ID.")
    ] = None,
    limit: Annotated[int, page_limit(5, 10)] = 5,
    cursor: Cursor = None,
) -> SearchResultList:
    q = text(q, "q")  # type: ignore[assignment]
    filters = {"q": q, "kind": kind, "competition": competition}
    pos = position(cursor, filters, int)
    offset = pos[0] if pos else 0
    if not 0 <= offset <= MAX_OFFSET:
        raise bad_cursor()
    kinds = REFERENCE_KINDS if kind == "reference" else ((kind,) if kind else None)
    async with read_models(request) as (conn, schema):
        rows = await search_sql.search(
            conn, schema, q=q, kinds=kinds, competition=competition, offset=offset, limit=limit + 1,
        )
    has_more = len(rows) > limit and offset + limit <= MAX_OFFSET
    rows = rows[:limit]
    next_cursor = encode_cursor(filters, [offset + limit]) if has_more else None
    return SearchResultList(data=[search_result(r) for r in rows], has_more=has_more, next_cursor=next_cursor)


ROUTES = [search]
