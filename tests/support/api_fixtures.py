"""Fixtures for the read-API tests: one database per session whose read models the real
projector wrote from the sample files (cloned per module, so tests that write never disturb
others), and the served app (front door, access, routes, lifespan) driven in process.

Callers use a Scale-plan key (3000 calls a minute) so the suite is not throttled by the
anonymous plan's per-address limits; keyless behaviour is tested where it matters.
The fixtures are a plugin of tests/conftest.py (`pytest_plugins`): any test may ask for them;
never import them into a test module (a session fixture would be built again per module).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable

import asyncpg
import pytest
from litestar.testing import AsyncTestClient

from access.store import create_key
from api.app import create_app
from infra.db import connect
from infra.settings import Settings, load_settings
from tests.conftest import SESSION_TAG, with_database
from tests.support.library_models import insert_library, library_rows
from tests.support.projection_harness import project
from tests.support.registry_models import insert_registry, registry_rows
from tests.support.sample_fold import EPL_2024, Sample, file_events, sample_events
from tests.support.sample_fold import sample as sample_files

KEY_SECRET = "test-secret"
READ_SCOPES = {"read:odds", "read:players", "read:reference"}

__all__ = ["sample", "sample_template", "api_db", "api_settings", "api_keys", "api", "anonymous_api"]


async def make_key(database_url: str, account: str, scopes: Iterable[str] = READ_SCOPES, *, plan: str = "scale",
                   mode: str = "live", secret: str = KEY_SECRET) -> str:
    """A new API key of `account` in that database (the key itself, as a caller sends it)."""
    conn = await asyncpg.connect(database_url)
    try:
        key, _ = await create_key(conn, secret.encode(), account=account, plan=plan, scopes=set(scopes), mode=mode)
    finally:
        await conn.close()
    return key


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
    """A migrated database whose `live` read models the real projector wrote from every live
    sample file (as `svc sample load` does, without the broker), and whose `test` ones (the
    sandbox) from the 2024 EPL games only, so a leak between datasets shows."""
    name = await _clone(pg_server, pg_template)
    conn = await connect(with_database(pg_server, name))
    try:
        settings = Settings()
        await project(settings, conn, sample_events(), "live")
        await project(settings, conn, file_events()[EPL_2024], "test")
        library, registry = library_rows(), registry_rows()
        for schema in ("live", "test"):  # the library and registry are in both datasets, as `svc sample load` puts them
            await insert_library(conn, schema, library)
            await insert_registry(conn, schema, registry)
        for schema in ("live", "test"):  # the relay would have sent them: a smaller database to clone
            await conn.execute(f'TRUNCATE "{schema}".outbox')
        await conn.execute("ANALYZE")  # planner statistics, as a served database has them
    finally:
        await conn.close()
    yield name
    await _drop(pg_server, name)


@pytest.fixture(scope="session")
def sample(sample_template) -> Sample:
    return sample_files()


@pytest.fixture(scope="module")
async def api_db(pg_server, sample_template) -> str:
    name = await _clone(pg_server, sample_template)
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
    return {mode: await make_key(api_db, "api-tests", mode=mode) for mode in ("live", "test")}


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
