"""The served API in its own process, as `svc up` runs it: `api.server:app` under the server
SVC_API_SERVER names (h2corn unless set; `SVC_API_SERVER=granian pytest ...` runs a test file's
served API under granian)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import httpx

from infra.api_server import api_command
from infra.net import free_port
from infra.settings import Settings
from tests.support.processes import stop

ROOT = Path(__file__).resolve().parents[2]


def served_by(**extra_env: str) -> str:
    """The server `api_process` starts (infra/api_server.py), for a benchmark's notes."""
    return extra_env.get("SVC_API_SERVER") or os.environ.get("SVC_API_SERVER") or Settings().api_server


@contextmanager
def api_server(
    database_url: str, data_dir: Path, key_secret: str, log_path: Path, app: str = "api.server:app", **extra_env: str,
) -> Iterator[str]:
    """Start the API server (one worker unless SVC_API_WORKERS says) serving `app` on a free loopback port; yield its base URL; stop it."""
    with api_process(database_url, data_dir, key_secret, log_path, app, **extra_env) as (base, _):
        yield base


@contextmanager
def api_process(
    database_url: str, data_dir: Path, key_secret: str, log_path: Path, app: str = "api.server:app", *,
    port: int | None = None, **extra_env: str,
) -> Iterator[tuple[str, subprocess.Popen]]:
    """`api_server`, yielding the server's main process too (for tests that stop it themselves);
    `port` serves on a given port (a restarted process where clients expect the old one); an
    SVC_API_WORKERS in `extra_env` starts that many workers, as `svc up` does."""
    port = port or free_port()
    server = served_by(**extra_env)
    workers = int(extra_env.get("SVC_API_WORKERS", "1"))
    argv, server_env = api_command(server, sys.executable, "127.0.0.1", port, workers, app=app)
    env = {
        **os.environ, "DATABASE_URL": database_url, "SVC_DATA_DIR": str(data_dir), "SVC_KEY_SECRET": key_secret,
        "SVC_LOG_LEVEL": "warning", "SVC_LOG_JSON": "true", **server_env, **extra_env,
    }
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(argv, env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"api server exited with {proc.returncode}; see {log_path}")
            try:
                if httpx.get(f"{base}/health", timeout=1).json().get("db"):
                    break
            except (httpx.HTTPError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"api server did not become healthy; see {log_path}")
            time.sleep(0.1)
        yield base, proc
    finally:
        stop(proc)
