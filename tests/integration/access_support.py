"""Real parts for the access tests: Redis (when one can be had), the served app with its lifespan,
and a few test-only routes that carry access `opt` like the real read routes do.

Redis: `REDIS_URL` when set; else a `redis-server` on a free port when the binary is on PATH;
else None, and the tests exercise the in-process fallback instead.
"""

from __future__ import annotations

from typing import Annotated

import asyncio
import os
import shutil
import subprocess
from contextlib import asynccontextmanager

import httpx
import msgspec
import pytest
from litestar.params import QueryParameter
from litestar import Request, get, post

from api.app import create_app
from api.conventions import dataset_of
from api.problems import ProblemError
from infra.net import free_port, wait_port
from infra.settings import Settings


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory) -> str | None:
    url = os.environ.get("REDIS_URL")
    if url:
        yield url
        return
    binary = shutil.which("redis-server")
    if binary is None:
        yield None
        return
    port = free_port()
    workdir = tmp_path_factory.mktemp("redis")
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(workdir)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        wait_port("127.0.0.1", port, 10, is_alive=lambda: proc.poll() is None)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(10)


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
