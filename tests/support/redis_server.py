"""Redis for the tests that use it: `REDIS_URL` when set; else a `redis-server` on a free port
when the binary is on PATH (one per session); else None, and those tests exercise the
in-process fallback instead. A plugin of tests/conftest.py (`pytest_plugins`), so the session
fixture is one per session, not one per module that imports it."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from infra.net import free_port, wait_port


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
