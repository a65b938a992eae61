"""Real parts for the access tests: the served app with its lifespan, and a few test-only routes
that carry access `opt` like the real read routes do. Redis (when one can be had) is the
`redis_url` fixture of tests/support/redis_server.py.
"""

from __future__ import annotations

from typing import Annotated

import asyncio
from contextlib import asynccontextmanager

import httpx
import msgspec
from litestar.params import QueryParameter
from litestar import Request, get, post

from api.app import create_app
from api.conventions import dataset_of
from api.problems import ProblemError
from infra.settings import Settings


# ---- test-only routes, mounted on the real app -------------------------------------------------

@get("/v1/_test/odds", opt={"operation": "test.odds", "scope": "read:odds", "price": 1}, sync_to_thread=False)
def priced_read(request: Request, fail: Annotated[int | None, QueryParameter()] = None) -> dict:
    """Like a read route: scope read:odds, 1 credit; `fail=404` answers a problem instead."""
    if fail == 404:
        raise ProblemError("not_found", "No such thing.", param="fail")
    return {"dataset": dataset_of(request)}


@post("/v1/_test/answers", opt={"operation": "test.answers", "scope": "run:answers", "price": 1}, sync_to_thread=False)
def keyed_run(request: Request) -> dict:
    """Like POST /v1/answers: needs a key with run:answers."""
    return {"ok": True}


TEST_ROUTES = [priced_read, keyed_run]


@asynccontextmanager
async def lifespan(app):
    """Run an ASGI app's lifespan on this loop (httpx's ASGI transport does not)."""
    to_app: asyncio.Queue = asyncio.Queue()
    from_app: asyncio.Queue = asyncio.Queue()
    task = asyncio.create_task(app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, to_app.get, from_app.put))
    await to_app.put({"type": "lifespan.startup"})
    started = await from_app.get()
    assert started["type"] == "lifespan.startup.complete", started
    try:
        yield
    finally:
        await to_app.put({"type": "lifespan.shutdown"})
        await from_app.get()
        await task


class Served:
    def __init__(self, app) -> None:
        self.app = app

    def client(self, address: str = "198.51.100.7", key: str | None = None) -> httpx.AsyncClient:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        transport = httpx.ASGITransport(app=self.app, client=(address, 40000))
        return httpx.AsyncClient(transport=transport, base_url="http://svc.test", headers=headers)


@asynccontextmanager
async def serving(settings: Settings):
    """The real served app (front door, access middleware, every route) plus the test routes."""
    app = create_app(settings)
    for handler in TEST_ROUTES:
        app.app.register(handler)
    async with lifespan(app):
        yield Served(app)


async def make_key(settings: Settings, account: str, plan: str, scopes: set[str], mode: str = "live") -> str:
    from tests.support.api_fixtures import make_key as make

    return await make(settings.database_url, account, scopes, plan=plan, mode=mode, secret=settings.secret())


def problem(response: httpx.Response) -> dict:
    assert response.headers["content-type"].startswith("application/problem+json"), response.text
    return msgspec.json.decode(response.content)
