"""Real parts for tests: one tansu broker and one PostgreSQL per session, isolated per test.

PostgreSQL is `DATABASE_URL` when set, else the embedded server. Each test that asks for the
database gets its own database cloned from a migrated template; each test that asks for
settings gets its own topic namespace on the shared broker.
"""

from __future__ import annotations

import os
import secrets
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest
from aiokafka.admin import AIOKafkaAdminClient
from hypothesis import HealthCheck, settings as hypothesis_settings

from infra.broker import start_broker
from infra.db import wait_for_database
from infra.kafka import started
from infra.migrate import migrate
from infra.postgres import database_url as embedded_url
from infra.postgres import start_postgres
from infra.settings import Settings, load_settings
from infra.topics import ensure_topics
import projections  # noqa: F401  (its import guards against a stale compiled fold)
from tests.support.processes import start_keeper

# Hypothesis's per-example deadline (200 ms) and its "too slow" health check measure wall time,
# which on a loaded 2-core CI box says more about the neighbours than about the code: a property
# failed there on time alone and passed on rerun. Properties are judged on their assertions only;
# speed is measured in `make bench`.
hypothesis_settings.register_profile(
    "svc", deadline=None, suppress_health_check=[HealthCheck.too_slow])
hypothesis_settings.load_profile("svc")

# Fixtures shared by many modules are plugins, never imported into test modules: a session
# fixture imported into a module is that module's own, built again for every such module
# (tests/unit/test_session_fixtures.py).
pytest_plugins = ("tests.support.api_fixtures", "tests.support.redis_server")

SESSION_TAG = secrets.token_hex(3)
_FOLDERS = pytest.StashKey[set]()


ROOT = Path(__file__).resolve().parents[1]


def _data_folders() -> set[str]:
    return {p.name for p in ROOT.iterdir() if p.is_dir() and p.name.endswith("-data")}


# How `make test` shares the suite between its xdist workers (`-n 4 --dist loadfile`): the
# unit of work is a test file, so its module fixtures (a served app over a cloned database, a
# whole stack) are built once, except in the files below, whose tests share nothing but session
# fixtures and take a minute or more each: their tests are handed out one by one, so every
# worker runs some of them rather than one worker running them one after another at the end.
SPREAD_FILES = frozenset({
    "tests/e2e/test_kept_log.py",
    "tests/e2e/test_postgres_death.py",
    "tests/integration/test_ingest_cli.py",
})
# Work is handed out in collection order (longest kinds first: end-to-end, then integration,
# then the many short unit files), so the short files even out the finish; xdist's default
# order (files with most tests first) left the end-to-end files, few tests but minutes each,
# to the end, with one worker idle while the other finished them.
_KIND_ORDER = {"e2e": 0, "integration": 1, "unit": 2}


def pytest_collection_modifyitems(config, items) -> None:
    def kind(item) -> int:
        parts = item.nodeid.split("::")[0].split("/")
        return _KIND_ORDER.get(parts[1] if len(parts) > 2 and parts[0] == "tests" else "", len(_KIND_ORDER))

    items.sort(key=kind)  # stable: a file keeps its own order


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # an xdist hook: absent without xdist
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class FilesThenSpread(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return nodeid if path in SPREAD_FILES else path

    config.option.loadscopereorder = False  # keep the collection order above
    return FilesThenSpread(config, log)


def pytest_sessionstart(session) -> None:
    session.config.stash[_FOLDERS] = _data_folders()
    # a compiled module that does not match its source never runs: importing projections
    # runs the sources instead (projections/compiled.py guard); the build test reports it


def pytest_sessionfinish(session, exitstatus) -> None:
    # state of the projector (faust) belongs under the stack's data dir, never in the checkout
    left = _data_folders() - session.config.stash.get(_FOLDERS, set())
    if left:
        print(f"\ntests left data folders in the repository root: {sorted(left)}")
        session.exitstatus = 1


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


@pytest.fixture(scope="session")
def broker(tmp_path_factory) -> str:
    """A bare tansu; SVC_TEST_BROKER=keeper: tansu behind the log keeper, as `svc up` runs it
    (every fetch and produce of the tests then goes through the keeper)."""
    where = tmp_path_factory.mktemp("broker")
    if os.environ.get("SVC_TEST_BROKER") == "keeper":
        proc, port = start_keeper(where, where / "keeper.log")
    else:
        proc, port = start_broker(log_path=where / "tansu.log")
    yield f"127.0.0.1:{port}"
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="session")
async def pg_server(tmp_path_factory) -> str:
    """URL of a server where tests may create databases."""
    url = os.environ.get("DATABASE_URL")
    if url:
        await wait_for_database(url)
        yield url
        return
    pgdata = tmp_path_factory.mktemp("pg") / "data"
    proc, port = start_postgres(pgdata, durable=False)
    url = embedded_url(port)
    await wait_for_database(url)
    yield url
    proc.terminate()  # SIGTERM: smart shutdown is fine, no clients remain
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="session")
async def pg_template(pg_server) -> str:
    """A migrated database that each test's database is cloned from."""
    name = f"svct_{SESSION_TAG}_tmpl"
    admin = await asyncpg.connect(pg_server)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    conn = await asyncpg.connect(with_database(pg_server, name))
    try:
        await migrate(conn)
    finally:
        await conn.close()
    yield name
    admin = await asyncpg.connect(pg_server)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


@pytest.fixture
async def database_url(pg_server, pg_template) -> str:
    """A fresh, migrated database of this test's own."""
    name = f"svct_{SESSION_TAG}_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(pg_server)
    try:
        await admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{pg_template}" STRATEGY FILE_COPY')
    finally:
        await admin.close()
    yield with_database(pg_server, name)
    admin = await asyncpg.connect(pg_server)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


@pytest.fixture
def namespace() -> str:
    return f"t{secrets.token_hex(4)}."


@pytest.fixture
async def settings(broker, database_url, namespace, tmp_path: Path) -> AsyncIterator[Settings]:
    """Settings of a test's own deployment: own topics on the shared broker, own database. Its
    topics are deleted after the test (drop_topics)."""
    yield load_settings(
        env={},
        use_stack=False,
        data_dir=tmp_path / "svc",
        kafka_bootstrap=broker,
        database_url=database_url,
        topic_namespace=namespace,
        topic_partitions=2,
        key_secret="test-secret",
    )
    await drop_topics(broker, namespace)


async def drop_topics(broker: str, namespace: str) -> None:
    """Delete every topic named under `namespace` (the test's own, and those it made under
    longer namespaces of its own) from the shared broker. Every Kafka client's start asks the
    broker for the metadata of all its topics (aiokafka's bootstrap), and tansu's answer grows
    with them: a producer's start and stop took 2 ms with no other topics, 35 ms with 1,000 and
    186 ms with 4,000 (16 and 65 ms of the client's CPU, 5 and 18 ms of tansu's), and a worker
    kept every test's ~20 topics until its session ended."""
    async with started(AIOKafkaAdminClient(bootstrap_servers=broker)) as admin:
        names = [name for name in await admin.list_topics() if name.startswith(namespace)]
        if names:
            await admin.delete_topics(names)


@pytest.fixture
async def topics(settings) -> dict[str, int]:
    return await ensure_topics(settings)
