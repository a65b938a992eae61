"""GET /v1/slate: the games of one local day across sports, with markets by identity."""

from __future__ import annotations

import zoneinfo
from datetime import date, datetime, time, timedelta
from typing import Annotated, Literal

from litestar import Request, get
from litestar.params import QueryParameter

from access.plans import READ_SCOPES
from api.conventions import RG_LINE, dataset_of, encode_cursor, request_id
from api.problems import ProblemError
from api.read_cache import kept_parts, part_version
from api.queries import games as games_sql
from api.queries import markets as markets_sql
from api.resources import examples
from api.resources.common import UTC, attribution_for, joined_source, utc
from api.resources.games import market_ref, slate_game
from api.resources.lists import Slate
from api.routes._db import read_models
from api.routes._docs import responses
from api.routes._params import SLUG, Cursor, from_micros, page_limit, position, to_micros
from api.time_zones import zone

DEFAULT_TZ = "America/New_York"
# the slate's status filter: live includes suspended games
STATUS_SETS = {"scheduled": ("scheduled",), "live": ("live", "suspended"), "final": ("final",)}


def day_bounds(day: date, tz: zoneinfo.ZoneInfo) -> tuple[datetime, datetime]:
    """The UTC instants the local day starts (inclusive) and ends (exclusive). A day with a
    clock change is 23 or 25 hours long; a midnight the clocks skip starts the day at the jump."""
    try:
        start = datetime.combine(day, time(0), tzinfo=tz).astimezone(UTC)
        end = datetime.combine(day + timedelta(days=1), time(0), tzinfo=tz).astimezone(UTC)
    except OverflowError:
        raise ProblemError("invalid_request", "'date' is out of range.", param="date") from None
    return start, end


async def _default_day(request: Request, conn, schema: str, local: zoneinfo.ZoneInfo) -> date:
    """Today in the zone; in test mode the sandbox's recorded day (the day its first game starts).

    The first kickoff is kept by the version of the games' kickoff order (`games.kickoff`, which
    scores and clocks do not announce): a slate built again during play for a score or a price
    does not ask for it again."""
    if dataset_of(request) == "test":
        version = part_version(request, ("games.kickoff",))  # before the read: never kept as newer
        # kept as a 1-tuple: a dataset with no game keeps None
        kept = kept_parts(request).get(("first_kickoff", version)) if version is not None else None
        first = kept[0] if kept is not None else await games_sql.first_kickoff(conn, schema)
        if kept is None and version is not None:
            kept_parts(request).put(("first_kickoff", version), (first,))
        if first is not None:
            return first.astimezone(local).date()
    return datetime.now(local).date()


@get(
    "/v1/slate",
    summary="The games of one local day across sports",
    description=(
        "Games whose kickoff falls on the local `date` in `tz` (a game with only a date counts on that "
        "date), across sports, in kickoff order; each with teams, state and its markets by identity (no "
        "box scores). `starts_at`/`ends_at` give the day in UTC (23 or 25 hours on a clock-change day); "
        "`game_count` counts every matching game and is the same on every page. `status=live` includes "
        "suspended games. Test-mode keys get the sandbox day. Carries `rg_line`."
    ),
    responses=responses(Slate, "The slate.", examples.slate()),
    # the page is kept by the version of these tables (api/read_cache.py); the default day and the
    # served status follow the clock
    opt={"operation": "slate.get", "scope": READ_SCOPES["game"], "price": 1, "read_tables": ("games", "teams", "markets"),
         "changes_with_time": True},
    tags=["games-and-markets"],
)
async def get_slate(
    request: Request,
    day: Annotated[date | None, QueryParameter(name="date", description="The local day, `YYYY-MM-DD`; default today in `tz`.")] = None,
    tz: Annotated[
        str, QueryParameter(min_length=1, max_length=64, description="IANA time zone name, e.g. `Europe/London`.")
    ] = DEFAULT_TZ,
    sport: Annotated[str | None, QueryParameter(pattern=SLUG, description="A sport slug or a competition slug.")] = None,
    competition: Annotated[str | None, QueryParameter(pattern=SLUG, description="A competition slug.")] = None,
    status: Annotated[
        Literal["scheduled", "live", "final"] | None,
        QueryParameter(description="`scheduled` (still to come), `live` (suspended included) or `final`."),
    ] = None,
    limit: Annotated[int, page_limit(25, 50)] = 25,
    cursor: Cursor = None,
) -> Slate:
    return await build_slate(request, day, tz, sport, competition, status, limit, cursor)


async def build_slate(
    request: Request, day: date | None, tz: str, sport: str | None = None, competition: str | None = None,
    status: str | None = None, limit: int = 25, cursor: str | None = None,
) -> Slate:
    """One page of the slate in the request's dataset (also the first-party page's, api/routes/site.py)."""
    local = zone(tz)
    async with read_models(request) as (conn, schema):
        if day is None:
            day = await _default_day(request, conn, schema, local)
        starts_at, ends_at = day_bounds(day, local)
        filters = {"date": day.isoformat(), "tz": tz, "sport": sport, "competition": competition, "status": status}
        pos = position(cursor, filters, int, str)
        after = (from_micros(pos[0]), pos[1]) if pos else None
        total, rows = await games_sql.slate_games(
            conn, schema, day=day, starts_at=starts_at, ends_at=ends_at, sport=sport, competition=competition,
            statuses=STATUS_SETS[status] if status else None, after=after, limit=limit + 1,
        )
        has_more = len(rows) > limit
        rows = rows[:limit]
        market_rows = await markets_sql.markets_of_games(conn, schema, [r["id"] for r in rows])
    by_game: dict[str, list] = {}
    for m in market_rows:
        by_game.setdefault(m["game_id"], []).append(market_ref(m))
    rid = request_id(request)
    items = [slate_game(r, by_game.get(r["id"], []), rid) for r in rows]
    next_cursor = encode_cursor(filters, [to_micros(rows[-1]["kickoff_sort"]), rows[-1]["id"]]) if has_more else None
    live = [g for g in items if g.stale_after_ms is not None]
    return Slate(
        as_of=max((g.as_of for g in items), default=utc(datetime.now(UTC))),
        source=joined_source(g.source for g in items),
        stale_after_ms=min((g.stale_after_ms for g in live), default=None),  # type: ignore[type-var]
        attribution=attribution_for(g.source for g in items), request_id=rid,
        live_topics=[t for g in items for t in g.live_topics], rg_line=RG_LINE,
        date=day, timezone=tz, starts_at=starts_at, ends_at=ends_at, game_count=total,
        data=items, has_more=has_more, next_cursor=next_cursor,
    )


ROUTES = [get_slate]
