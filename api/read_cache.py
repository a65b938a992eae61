"""Responses of read routes kept by the version of the read models they were built from
(api/changes.py), and served again with no query, no parameter parsing and no encoding while
nothing they read has changed.

A route opts in by naming, in its `opt`, every read-model table its response is built from:
`opt={..., "read_tables": ("games", "teams", "competitions")}`, or a part of a table that
announces its own changes (`games.kickoff`: the games' kickoff order, dataset migration 0150)
where the response reads only that part; the response must depend on
nothing else but the request's path, query string and dataset (not on the caller, the clock
or a header), except that a route may declare `"changes_with_time": True` when what it serves
also depends on the clock (a game whose start has passed with no report becomes
`result_unknown`): such a response is kept for at most `TIME_BUCKET_SECONDS`. The buckets are
whole minutes of Unix time, so no local midnight falls inside one (every zone's offset is whole
minutes): a slate's default day ("today") turns with the clock. Runs inside access control: a served copy is identified, rate-limited and charged
like any call, and the access and front-door headers are added around it as usual.

The version is read before the route runs, so a response is kept under the version it may be
older than, never newer: a change heard of while it was built makes it unreachable at once.
While the notification listener is down there is no version: every call runs the route (whose
own row-version checks then keep it exact).

One build per key at a time: a call that finds its response being built for another call waits
for that one and is served its bytes, rather than building it again. Without this, every change
during play made each of the clients then asking for a response build it at once (64 clients,
64 builds queueing for 20 pooled connections), and the route's cost between changes was that
burst, not one build. A waiter was asked for under the same version, so the build answers it
exactly as its own run would have; if that build is not kept (an error, not 200, cancelled) the
waiter runs the route itself.
"""

from __future__ import annotations

import asyncio
import time

from litestar.enums import ScopeType
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from api.front import COMPRESS_LEVEL, COMPRESS_MIN_BYTES
from api.kept import Kept, KeptStore, Store
from schemas.datasets import pg_schema


TIME_BUCKET_SECONDS = 60


def read_version(listener, scope: Scope, tables: tuple[str, ...]) -> tuple | None:
    """What this process has been told of changes to `tables` of the request's dataset, or None
    while it is not listening (then only the database can say what changed)."""
    if listener is None or not listener.connected:
        return None
    schema = pg_schema(scope["state"].get("dataset", "live"))
    return (schema, *listener.changes.version(schema, tables))


def keeping(request) -> bool:
    """Whether the read cache keeps this process's responses now (it is listening): a kept
    route then runs only to build a response after a change it heard of."""
    listener = request.app.state.app_state.listener
    return listener is not None and listener.connected


def part_version(request, tables: tuple[str, ...]) -> tuple | None:
    """`read_version` for a part of a route's response that reads fewer tables than the whole
    (a game's box scores: `stat_lines` alone), kept by the route under this version in
    `kept_parts` so that a build after a change to the other tables does not read it again;
    None while not listening."""
    return read_version(request.app.state.app_state.listener, request.scope, tables)


def kept_parts(request) -> Store:
    """The app's store of parts kept by `part_version` (AppState.parts), keyed (part name,
    version, ...): per app, never per module, since versions are counted per listener."""
    return request.app.state.app_state.parts


_VARY = (b"vary", b"Accept-Encoding")


async def _serve(kept: Kept, request_id: str, scope: Scope, send: Send) -> None:
    """The kept response; gzipped from its kept deflated stretches for a client that takes gzip
    (as the front door's compressor would have: from the same size, at the same level, with
    `Vary: Accept-Encoding`); the compressor passes on a body that says its encoding as it is
    (api/compress.py)."""
    if kept.size >= COMPRESS_MIN_BYTES and scope["state"].get("gzip"):
        body = kept.gzip_body(request_id, COMPRESS_LEVEL)
        headers = [h for h in kept.headers if h[0] != b"content-length"]
        headers += [(b"content-encoding", b"gzip"), (b"content-length", str(len(body)).encode()), _VARY]
    else:
        body = kept.body(request_id)
        headers = list(kept.headers)
    await send({"type": "http.response.start", "status": kept.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class ReadCacheMiddleware(ASGIMiddleware):
    scopes = (ScopeType.HTTP,)
    _app_state = None

    def __init__(self) -> None:
        self._building: dict[tuple, asyncio.Future] = {}  # key -> the build under way (None if not kept)

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        tables = scope["route_handler"].opt.get("read_tables")
        request_id = scope["state"].get("request_id")
        # the store goes with the app's listener: versions of one listener mean nothing to another
        app_state = self._app_state or scope["litestar_app"].state.app_state
        self._app_state = app_state  # one app per middleware instance
        version = None
        if tables and request_id and scope["method"] == "GET":
            version = read_version(app_state.listener, scope, tables)
        if version is None:
            await next_app(scope, receive, send)
            return
        store: KeptStore = app_state.kept  # the one store of kept responses (api/kept.py)
        if scope["route_handler"].opt.get("changes_with_time"):
            version = (*version, int(time.time()) // TIME_BUCKET_SECONDS)
        key = (scope["path"], scope["query_string"], version)
        kept = store.get(key)
        if kept is None and (building := self._building.get(key)) is not None:
            kept = await asyncio.shield(building)  # one waiter cancelled must not cancel it for the rest
            if kept is None:
                await next_app(scope, receive, send)
                return
        if kept is not None:
            await _serve(kept, request_id, scope, send)
            return
        done: asyncio.Future = asyncio.get_running_loop().create_future()
        self._building[key] = done
        kept = None
        try:
            kept = await self._build(store, key, request_id, scope, receive, send, next_app)
        finally:
            del self._building[key]
            done.set_result(kept)

    async def _build(self, store: KeptStore, key: tuple, request_id: str, scope: Scope, receive: Receive, send: Send,
                     next_app: ASGIApp) -> Kept | None:
        """Runs the route and keeps its response if it is a whole 200. A kept response is sent
        as every later copy of it is (`_serve`): gzipped from its kept stretches, not whole by
        the front door's compressor. Whole, the same body packs tighter (a list of 20 games:
        3,844 bytes against 5,190), but then its length would depend on whether this call
        built it or found it kept: a HEAD answered just after the minute turned (a new key for
        a route that changes with time) gave a length no GET then sent."""
        held: list[Message] = []  # the response's messages until it is known whole
        passing = False  # a body sent in parts: sent as it comes, not kept

        async def capture(message: Message) -> None:
            nonlocal passing
            if passing:
                await send(message)
                return
            held.append(message)
            if message["type"] == "http.response.body" and message.get("more_body", False):
                passing = True
                for m in held:
                    await send(m)

        await next_app(scope, receive, capture)
        if passing:
            return None
        start = next((m for m in held if m["type"] == "http.response.start"), None)
        bodies = [m for m in held if m["type"] == "http.response.body"]
        if start is not None and start["status"] == 200 and len(bodies) == 1:
            kept = store.put(key, Kept(200, list(start.get("headers", [])), bodies[0].get("body", b""), request_id))
            await _serve(kept, request_id, scope, send)
            return kept
        for m in held:
            await send(m)
        return None
