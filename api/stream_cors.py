"""CORS for the single-topic streams (`/v1/stream/*`), so a page's EventSource may read them.

A browser's `Origin` that some kind of wire ticket may be used from (`wire.origins`: API-key,
first-party and card origins) gets `Access-Control-Allow-Origin` with its own origin on every
response of a stream path, errors included (the page may read why it was refused), and a
preflight (`OPTIONS` with `Access-Control-Request-Method`) is answered here: GET, with the
headers a stream request may carry (`Last-Event-ID`, which an EventSource sends when it
reconnects, `Authorization`, `Api-Version`, `Client-Request-Id`). Whether this ticket may be used
from this origin is the stream's own check (403 `not_entitled`, `param: Origin`). No credentials
mode: the ticket in the URL is the credential, never a cookie. Other origins and paths pass
untouched (no CORS headers: the browser blocks the page from reading).
"""

from __future__ import annotations

from litestar.enums import ScopeType
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Receive, Scope, Send

from access.address import header_value
from api.wire_serving import wire_origins

STREAM_PREFIX = "/v1/stream/"
ALLOW_HEADERS = b"Last-Event-ID, Authorization, Api-Version, Client-Request-Id"
EXPOSE_HEADERS = b"Request-Id, Api-Version, Client-Request-Id, Retry-After"
PREFLIGHT_MAX_AGE = b"600"


class StreamCors(ASGIMiddleware):
    scopes = (ScopeType.HTTP,)

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        origin = header_value(scope, b"origin") if scope["path"].startswith(STREAM_PREFIX) else None
        if origin is None or not wire_origins(scope["litestar_app"].state.settings).any_allows(origin):
            await next_app(scope, receive, send)
            return
        allow = [(b"access-control-allow-origin", origin.encode("latin-1")), (b"vary", b"Origin")]
        if scope["method"] == "OPTIONS" and header_value(scope, b"access-control-request-method") is not None:
            await send({"type": "http.response.start", "status": 204, "headers": [
                *allow, (b"access-control-allow-methods", b"GET"), (b"access-control-allow-headers", ALLOW_HEADERS),
                (b"access-control-max-age", PREFLIGHT_MAX_AGE)]})
            await send({"type": "http.response.body", "body": b""})
            return

        async def send_allowed(message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), *allow,
                                                  (b"access-control-expose-headers", EXPOSE_HEADERS)]}
            await send(message)

        await next_app(scope, receive, send_allowed)
