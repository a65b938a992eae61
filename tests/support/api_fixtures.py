"""Fixtures for the read-API tests: one database per session with the sample read models
loaded (cloned per module, so tests that write never disturb others), and the served app
(front door, access, routes, lifespan) driven in process.

Callers use a Scale-plan key (3000 calls a minute) so the suite is not throttled by the
anonymous plan's per-address limits; keyless behaviour is tested where it matters.
Import the fixtures into a test module with `from tests.support.api_fixtures import *`.
"""

from __future__ import annotations

import secrets

import asyncpg
import pytest
from litestar.testing import AsyncTestClient

from access.store import create_key
from api.app import create_app
from infra.db import connect
from infra.settings import load_settings
from tests.conftest import SESSION_TAG, with_database
from tests.support import read_models
from tests.support.library_models import insert_library, library_rows
from tests.support.registry_models import insert_registry, registry_rows

KEY_SECRET = "test-secret"
READ_SCOPES = {"read:odds", "read:players", "read:reference"}

__all__ = ["sample", "sample_template", "api_db", "api_settings", "api_keys", "api", "anonymous_api"]


async def _clone(pg_server: str, template: str) -> str:
    name = f"svct_{SESSION_TAG}_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(pg_server)
    try:
        await admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}" STRATEGY FILE_COPY')
    finally:
        await admin.close()
    return name


async def _drop(pg_server: str, name: str) -> None:
    admin = await asyncpg.connect(pg_server)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


@pytest.fixture(scope="session")
async def sample_template(pg_server, pg_template):
    """A migrated database holding the sample read models in `live`, and in `test` (the
    sandbox) only the 2024 EPL games, so a leak between datasets shows."""
    name = await _clone(pg_server, pg_template)
    conn = await connect(with_database(pg_server, name))
    try:
        rows, sample = read_models.build()
        await read_models.insert(conn, "live", rows)
        await read_models.insert(conn, "test", _sandbox(rows))
        library, registry = library_rows(), registry_rows()
        for schema in ("live", "test"):  # the library and registry are in both datasets, as `svc sample load` puts them
            await insert_library(conn, schema, library)
            await insert_registry(conn, schema, registry)
    finally:
        await conn.close()
    yield name, sample
    await _drop(pg_server, name)


def _sandbox(rows: read_models.Rows) -> read_models.Rows:
    """The sandbox: the reference data and the 2024 EPL games with their markets only."""
    t = rows.tables
    games = {g["id"] for g in t["games"] if g["competition"] == "epl"}
    markets = {m["id"] for m in t["markets"] if m["game_id"] in games}
    out = read_models.Rows()
    out.tables.update(
        sports=t["sports"], competitions=t["competitions"],
        seasons=[r for r in t["seasons"] if r["competition"] == "epl"],
        teams=[r for r in t["teams"] if r["competition"] == "epl"],
        games=[r for r in t["games"] if r["id"] in games],
        markets=[r for r in t["markets"] if r["id"] in markets],
        market_lines=[r for r in t["market_lines"] if r["market_id"] in markets],
        search_index=[r for r in t["search_index"] if r["competition"] == "epl"],
    )
    return out


@pytest.fixture(scope="session")
def sample(sample_template) -> read_models.Sample:
    return sample_template[1]


@pytest.fixture(scope="module")
async def api_db(pg_server, sample_template) -> str:
    name = await _clone(pg_server, sample_template[0])
    yield with_database(pg_server, name)
    await _drop(pg_server, name)


@pytest.fixture(scope="module")
def api_settings(api_db, tmp_path_factory):
    return load_settings(
        env={}, use_stack=False, data_dir=tmp_path_factory.mktemp("svc"), database_url=api_db, key_secret=KEY_SECRET,
    )


@pytest.fixture(scope="module")
async def api_keys(api_db) -> dict[str, str]:
    """A Scale-plan key per mode, with the read scopes."""
    conn = await asyncpg.connect(api_db)
    try:
        live, _ = await create_key(conn, KEY_SECRET.encode(), account="api-tests", plan="scale", scopes=READ_SCOPES, mode="live")
        test, _ = await create_key(conn, KEY_SECRET.encode(), account="api-tests", plan="scale", scopes=READ_SCOPES, mode="test")
    finally:
        await conn.close()
    return {"live": live, "test": test}


@pytest.fixture(scope="module")
async def api(api_settings, api_keys):
    """The served app, called with a live Scale-plan key."""
    async with AsyncTestClient(app=create_app(api_settings)) as client:
        client.headers["Authorization"] = f"Bearer {api_keys['live']}"
        yield client


@pytest.fixture(scope="module")
async def anonymous_api(api_settings):
    async with AsyncTestClient(app=create_app(api_settings)) as client:
        yield client
