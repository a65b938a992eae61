"""A killed embedded Postgres leaves its lock file behind; when the PID in it has been reused by
another process, PostgreSQL refuses to start. The stack clears such a lock, never a live one."""

from __future__ import annotations

import subprocess

import asyncpg

from infra.db import wait_for_database
from infra.net import free_port
from infra.postgres import clear_stale_lock, database_url, init_cluster, postgres_argv, start_postgres


def _lock_naming(pgdata, pid: int) -> None:
    # the layout PostgreSQL writes: pid, data dir, start time, port, socket dir, ...
    (pgdata / "postmaster.pid").write_text(f"{pid}\n{pgdata}\n1700000000\n5432\n{pgdata}\n127.0.0.1\n")


async def test_a_lock_naming_a_reused_pid_is_cleared_and_a_live_one_kept(tmp_path):
    pgdata = tmp_path / "pg" / "data"
    user = init_cluster(pgdata)
    # alive, the server's own user, not a postmaster: a PID reused after a kill
    other = subprocess.Popen(["sleep", "60"], user=user)
    _lock_naming(pgdata, other.pid)

    # as the supervisor does before each start of its postgres child
    clear_stale_lock(pgdata)
    assert not (pgdata / "postmaster.pid").exists()
    proc, port = start_postgres(pgdata, durable=False)
    try:
        # start_postgres returns once the port answers; the server refuses connections until its
        # start-up ends (CannotConnectNowError, seen on a loaded box), as every caller allows for
        await wait_for_database(database_url(port))
        conn = await asyncpg.connect(database_url(port), timeout=10)
        assert await conn.fetchval("SELECT 1") == 1
        await conn.close()
        live = (pgdata / "postmaster.pid").read_text()
        clear_stale_lock(pgdata)  # the running server's lock stays
        assert (pgdata / "postmaster.pid").read_text() == live
    finally:
        other.kill()
        proc.terminate()
        proc.wait(30)


def test_without_clearing_postgres_refuses_a_lock_naming_a_live_pid(tmp_path):
    """The failure this guards against, shown on the real server."""
    pgdata = tmp_path / "pg" / "data"
    user = init_cluster(pgdata)
    # a process of the server's own user holds the PID (PostgreSQL ignores one it may not signal)
    other = subprocess.Popen(["sleep", "60"], user=user)
    try:
        _lock_naming(pgdata, other.pid)
        done = subprocess.run(postgres_argv(pgdata, free_port(), durable=False), user=user, capture_output=True,
                              text=True, timeout=30)
    finally:
        other.kill()
    assert done.returncode != 0
    assert "lock file" in done.stderr and "already exists" in done.stderr
