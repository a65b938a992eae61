"""`svc up` on the embedded default: health, doctor, restart of a killed child, clean Ctrl-C."""

from __future__ import annotations

import os
import signal
import time

import pytest

from tests.e2e.stack import Stack, alive, processes_of

pytestmark = pytest.mark.e2e


def test_up_serves_health_restarts_children_and_stops_cleanly(tmp_path):
    stack = Stack(tmp_path / "svc")
    try:
        health = stack.wait_health()
        assert health["ok"] is True and health["db"] is True and health["migrated"] is True
        assert health["redis"] is None  # no REDIS_URL: in-process counters

        pids = {name: stack.pid(name) for name in ("supervisor", "broker", "postgres", "api", "projector")}
        assert all(pids[n] for n in ("supervisor", "broker", "postgres", "api")), pids

        code, report = stack.svc_json("doctor")
        assert report["broker"]["ok"] is True and report["broker"]["address"].startswith("127.0.0.1:")
        assert report["postgres"]["ok"] is True and report["postgres"]["migrated"] is True
        assert report["api"]["ok"] is True and report["redis"]["ok"] is None
        # the projector's fold runs compiled, from a build no older than its sources
        assert report["fold"]["ok"] is (None if os.environ.get("SVC_PURE_PYTHON") == "1" else True)

        # a child killed behind the supervisor's back is restarted, and serves again
        os.kill(pids["api"], signal.SIGKILL)
        new_api = stack.wait_pid_change("api", pids["api"])
        assert new_api != pids["api"]
        assert stack.wait_health()["ok"] is True
        pids["api"] = new_api
        pids = {**pids, **{n: stack.pid(n) for n in ("projector",)}}
    finally:
        code = stack.stop()
    assert code == 0, stack.log_text()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(p and alive(p) for p in pids.values()):
        time.sleep(0.2)
    left = {n: p for n, p in pids.items() if p and alive(p)}
    assert not left, f"processes left behind after Ctrl-C: {left}"
    # grandchildren too (API workers, Postgres backends): nothing carrying this stack's data dir
    assert processes_of(stack.data_dir) == []
    assert not list((tmp_path / "svc" / "run").glob("*.pid"))
