"""GET /v1/reference and GET /v1/reference/{topic_id}: the reference
library, published entries only. No key needed; 1 credit each (docs/reference.md)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated, Literal

from litestar import Request, get
from litestar.params import PathParameter, QueryParameter

from api.conventions import encode_cursor, request_id
from api.problems import ProblemError
from api.queries import library as library_sql
from api.resources import examples
from api.resources.library import ReferenceEntry, reference_entry
from api.resources.lists import ReferenceEntryList
from api.routes._db import read_models
from api.routes._docs import responses
from api.routes._params import Cursor, bad_cursor, page_limit, position, text
from domain.ids import ID_PATTERNS
from schemas.library import JURISDICTION, OPERATOR, SLUG

KindFilter = Literal["term", "rule", "law", "tax", "policy", "guide", "help"]
ProductFilter = Literal[
    "sportsbook", "dfs", "pickem", "prediction_market", "sweepstakes", "season_fantasy", "horse_racing",
    "online_casino", "lottery", "exchange",
]
TOPIC_ID = f"({ID_PATTERNS['reference'].pattern})|({SLUG})"
# how deep relevance paging goes: beyond this the query should be sharper
MAX_OFFSET = 1000
OPT = {"scope": "read:reference", "price": 1}


@get(
    "/v1/reference",
    summary="Search the reference library",
    description=(
        "Published entries of the library: terms, rules, laws, tax, policies, guides and help. With `q`, best "
        "match first: full text over title, aliases, summary and body (title and aliases weigh most) plus close "
        "spellings of the title and aliases (`viggg`, `kely`); without `q`, topic order (kind: term, rule, law, "
        "tax, policy, guide, help; then title). `jurisdiction` takes an ISO 3166 code in any case: a subdivision "
        "(`US-NJ`) also matches entries for its whole country, a country (`US`) also its subdivisions'. Never "
        "ranked by a betting measure. No key needed."
    ),
    responses=responses(ReferenceEntryList, "A page of entries.", examples.reference_list()),
    opt={"operation": "reference.list", **OPT},
    tags=["reference"],
)
async def list_reference(
    request: Request,
    q: Annotated[
        str | None, QueryParameter(min_length=1, max_length=500, description="What to look for, 1 to 500 characters.")
    ] = None,
    kind: Annotated[KindFilter | None, QueryParameter(description="Only entries of this kind.")] = None,
    jurisdiction: Annotated[
        str | None,
        QueryParameter(pattern=JURISDICTION, description="ISO 3166 code: `US`, `US-NJ`, `gb` (any case)."),
    ] = None,
    product: Annotated[ProductFilter | None, QueryParameter(description="Only entries about this product.")] = None,
    operator: Annotated[
        str | None, QueryParameter(pattern=OPERATOR, description="Operator slug, such as `draftkings`.")
    ] = None,
    limit: Annotated[int, page_limit(20, 50)] = 20,
    cursor: Cursor = None,
) -> ReferenceEntryList:
    q = text(q, "q")
    if q is not None and not q.strip():
        raise ProblemError("invalid_request", "'q' must contain something other than spaces.", param="q")
    jurisdiction = jurisdiction.upper() if jurisdiction else None
    filters = {"q": q, "kind": kind, "jurisdiction": jurisdiction, "product": product, "operator": operator}
    common = dict(kind=kind, jurisdiction=jurisdiction, product=product, operator=operator)
    async with read_models(request) as (conn, schema):
        if q is None:
            pos = position(cursor, filters, int, str, str)
            rows = await library_sql.topic_page(conn, schema, **common, after=tuple(pos) if pos else None,
                                                limit=limit + 1)
        else:
            pos = position(cursor, filters, int)
            offset = pos[0] if pos else 0
            if not 0 <= offset <= MAX_OFFSET:
                raise bad_cursor()
            rows = await library_sql.relevance_page(conn, schema, q=q, **common, offset=offset, limit=limit + 1)
    has_more = len(rows) > limit
    rows = rows[:limit]
    next_cursor = None
    if has_more and q is None:
        last = rows[-1]
        next_cursor = encode_cursor(filters, [last["kind_rank"], last["title"], last["id"]])
    elif has_more and offset + limit <= MAX_OFFSET:
        next_cursor = encode_cursor(filters, [offset + limit])
    else:
        has_more = False
    rid, today = request_id(request), datetime.now(timezone.utc).date()
    return ReferenceEntryList(data=[reference_entry(r, rid, today) for r in rows], has_more=has_more,
                              next_cursor=next_cursor)


@get(
    "/v1/reference/{topic_id:str}",
    summary="Get a reference entry",
    description=(
        "One published entry by its `ref_` ID or its slug (`vig`, `us-nj-sports-betting`, "
        "`problem-not-found`). Problem objects' `doc_url` opens the help entry of their code here. No key needed."
    ),
    responses=responses(ReferenceEntry, "The entry.", examples.reference_entry(), "not_found"),
    opt={"operation": "reference.get", **OPT},
    tags=["reference"],
)
async def get_reference(
    request: Request,
    topic_id: Annotated[
        str, PathParameter(pattern=TOPIC_ID, max_length=100, description="`ref_` ID or slug.")
    ],
) -> ReferenceEntry:
    async with read_models(request) as (conn, schema):
        row = await library_sql.get_entry(conn, schema, topic_id)
    if row is None:
        raise ProblemError("not_found", f"No published reference entry {topic_id!r}.", param="topic_id")
    return reference_entry(row, request_id(request), datetime.now(timezone.utc).date())


ROUTES = [list_reference, get_reference]
