"""The first-party live slate page, served by the API itself (docs/site.md).

`GET /` is the page (plain HTML, CSS and a small script from `api/site/`, no build step) and
gives the browser its session cookie (`access.site_session`: signed, HttpOnly, SameSite=Strict,
`Path=/site`, Secure over TLS). The page's own calls carry that cookie and nothing else; no API
key ever reaches the page:

- `GET /site/slate?mode=live|test&tz=…[&date=…]`: the day's slate (`api.routes.slate.build_slate`),
  in the sandbox dataset for `mode=test` (whose default day is the sandbox day);
- `POST /site/ticket` `{"mode": …}`: a `session` Wire ticket for the socket, standing on the
  first-party site's own key (`wire.tickets.site_key`); its connections count per visitor.

These are the page's plumbing, not the public API: they stay out of the OpenAPI document. They
are metered like key-less calls (per address and operation, the anonymous plan's window and
credits) and a keyed request gains nothing here.
"""

# no `from __future__ import annotations`: Litestar reads the handlers' types at import time

import time
from datetime import date, datetime
from importlib import resources
from typing import Annotated, Literal

import msgspec
from litestar import Request, Response, get, post
from litestar.exceptions import ValidationException
from litestar.openapi.spec import Example
from litestar.params import Body, PathParameter, QueryParameter

from access.address import header_value
from access.site_session import cookie_value, needs_renewal, new_session, session_id_of, set_cookie
from api.access.middleware import service_for
from api.errors import body_validation_handler
from api.problems import ProblemError
from api.routes._db import read_models
from api.routes.slate import DEFAULT_TZ, build_slate
from api.routes.wire_tickets import ticket_url
from api.wire_serving import origin_of_url, own_origins
from wire.tickets import mint_ticket, site_key

Mode = Literal["live", "test"]
SITE_PAGES = 4  # pages of 50 games the page reads of one day at most
ASSETS = {"app.js": "text/javascript; charset=utf-8", "site.css": "text/css; charset=utf-8", "icon.svg": "image/svg+xml"}
# the page loads only its own files and talks only to its own origin (the socket included)
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
PAGE_HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
                "Cache-Control": "no-store"}


def _asset(name: str) -> bytes:
    return resources.files("api.site").joinpath(name).read_bytes()


def _secure(request: Request) -> bool:
    """Whether the page is served over TLS: the connection's scheme, or the public URL's."""
    public = request.app.state.settings.public_url
    return request.scope.get("scheme") == "https" or bool(public and public.startswith("https://"))


@get("/", include_in_schema=False, media_type="text/html; charset=utf-8")
async def slate_page(request: Request) -> Response[bytes]:
    """The page, and a new session cookie with it."""
    cookie = new_session(service_for(request.scope).secret, time.time())
    return Response(_asset("index.html"), media_type="text/html; charset=utf-8",
                    headers={**PAGE_HEADERS, "Set-Cookie": set_cookie(cookie, _secure(request))})


@get("/site/assets/{name:str}", include_in_schema=False)
async def site_asset(name: Annotated[str, PathParameter()]) -> Response[bytes]:
    if name not in ASSETS:
        raise ProblemError("not_found", f"No page asset {name!r}.", param="name")
    return Response(_asset(name), media_type=ASSETS[name],
                    headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"})


def _session(request: Request) -> tuple[str, str]:
    """(session ID, cookie value) of the request's valid session cookie, else 401."""
    value = cookie_value(header_value(request.scope, b"cookie"))
    session_id = session_id_of(service_for(request.scope).secret, value, time.time())
    if session_id is None or value is None:
        raise ProblemError("unauthenticated", "No valid session: load the page again.", param="Cookie")
    return session_id, value


def _same_origin(request: Request) -> None:
    """A browser's `Origin` must be the API's own (the page's) origin."""
    origin = header_value(request.scope, b"origin")
    if origin is not None and origin_of_url(origin) not in own_origins(request.app.state.settings, request.scope):
        raise ProblemError("not_entitled", "Only the first-party page may call this.", param="Origin")


@get("/site/slate", include_in_schema=False, opt={"operation": "site.slate", "scope": None, "price": 1})
async def site_slate(
    request: Request,
    mode: Annotated[Mode, QueryParameter()] = "live",
    tz: Annotated[str, QueryParameter(min_length=1, max_length=64)] = DEFAULT_TZ,
    day: Annotated[date | None, QueryParameter(name="date")] = None,
) -> Response[bytes]:
    _session(request)
    _same_origin(request)
    request.scope["state"]["dataset"] = mode  # the page's dataset, not its caller's
    slate = await build_slate(request, day, tz, limit=50)
    games = list(slate.data)
    for _ in range(SITE_PAGES - 1):
        if not slate.has_more:
            break
        slate = await build_slate(request, slate.date, tz, limit=50, cursor=slate.next_cursor)
        games.extend(slate.data)
    whole = msgspec.structs.replace(slate, data=games, live_topics=[t for g in games for t in g.live_topics])
    return Response(msgspec.json.encode(whole), media_type="application/json", headers={"Cache-Control": "no-store"})


class SiteTicketRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    mode: Mode = "live"


class SiteTicket(msgspec.Struct, kw_only=True):
    ticket: str
    url: str
    expires_at: datetime
    mode: Mode


@post("/site/ticket", include_in_schema=False, status_code=201,
      opt={"operation": "site.ticket", "scope": None, "price": 1},
      exception_handlers={ValidationException: body_validation_handler()})
async def site_ticket(
    request: Request,
    data: Annotated[SiteTicketRequest, Body(examples=[Example(summary="A ticket for the sandbox", value={"mode": "test"})])],
) -> Response[bytes]:
    session_id, cookie = _session(request)
    _same_origin(request)
    secret = service_for(request.scope).secret
    async with read_models(request) as (conn, _):
        found = await site_key(conn, secret)
        if found is None:
            raise ProblemError("service_unavailable", "Live updates of this page are switched off.")
        key_id, plan = found
        # the visitor's session is the "account" its connections count against (the plan's limit)
        ticket, grant = await mint_ticket(conn, secret, key_id=key_id, account_id=f"site:{session_id}", plan=plan,
                                          mode=data.mode, transport="ws", topics=None, kind="session")
    base = request.app.state.settings.public_url or str(request.base_url)
    body = SiteTicket(ticket=ticket, url=ticket_url(base, "ws", None), expires_at=grant.expires_at, mode=data.mode)
    headers = {"Cache-Control": "no-store"}
    now = time.time()
    if needs_renewal(cookie, now):
        headers["Set-Cookie"] = set_cookie(new_session(secret, now), _secure(request))
    return Response(msgspec.json.encode(body), status_code=201, media_type="application/json", headers=headers)


ROUTES = [slate_page, site_slate, site_ticket, site_asset]
