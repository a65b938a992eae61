"""`infra.db.DATABASE_DOWN`, the one rule for "the database cannot be used right now", against
a real server: what an outage or an unmigrated database raises is in it, a bad query is not."""

from __future__ import annotations

import socket

import asyncpg
import pytest

from infra.db import DATABASE_DOWN
from tests.conftest import with_database


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _raised(coro) -> BaseException:
    with pytest.raises(Exception) as info:
        await coro
    return info.value


async def test_an_outage_is_down_and_a_bad_query_is_not(pg_server):
    refused = await _raised(asyncpg.connect(f"postgresql://root@127.0.0.1:{_free_port()}/root", timeout=5))
    assert isinstance(refused, DATABASE_DOWN), repr(refused)
    missing = await _raised(asyncpg.connect(with_database(pg_server, "svct_no_such_database"), timeout=5))
    assert isinstance(missing, DATABASE_DOWN), repr(missing)

    conn = await asyncpg.connect(pg_server)
    admin = await asyncpg.connect(pg_server)
    try:
        unmigrated = await _raised(conn.fetch("SELECT * FROM svc_no_such_table"))
        assert isinstance(unmigrated, DATABASE_DOWN), repr(unmigrated)
        for bad in ("SELEC 1", "SELECT 1/0", "SELECT 'x'::int"):  # bugs surface as bugs, not as 503s
            error = await _raised(conn.fetch(bad))
            assert isinstance(error, asyncpg.PostgresError) and not isinstance(error, DATABASE_DOWN), repr(error)
        assert await admin.fetchval("SELECT pg_terminate_backend($1)", conn.get_server_pid())
        lost = await _raised(conn.fetch("SELECT 1"))
        assert isinstance(lost, DATABASE_DOWN), repr(lost)
    finally:
        conn.terminate()
        await admin.close()
