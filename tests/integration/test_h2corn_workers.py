"""Several h2corn workers (infra/h2corn_serve.py, SVC_API_WORKERS): each a process of its own on
the same port; one that dies is started again while the others serve on; one that cannot start,
or a port another process holds, stops the server with an error; the workers stop with it, even
when it is killed. A bare app that answers with its process id (tests/integration/pid_app.py);
real processes, real signals. (The Wire under two workers: test_wire_workers.py.)"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import httpx
import psutil
import pytest

from infra.h2corn_serve import STABLE_SECONDS
from infra.net import free_port, wait_port
from tests.support.processes import stop

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def serve(port: int, workers: int = 2, target: str = "tests.integration.pid_app:app") -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "infra.h2corn_serve", "127.0.0.1", str(port), target,
                             f"--workers={workers}"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def answering(port: int, requests: int = 40) -> set[int]:
    """The process ids that answered `requests` requests, each on a new connection."""
    pids = set()
    for _ in range(requests):
        with httpx.Client(timeout=30) as client:  # a new connection (a new source port) each
            pids.add(int(client.get(f"http://127.0.0.1:{port}/").text))
    return pids


def workers_of(proc: subprocess.Popen) -> list[psutil.Process]:
    return psutil.Process(proc.pid).children()


def serving(proc: subprocess.Popen, port: int) -> set[int]:
    """Once both workers answer (the port accepts as soon as the server has bound it, before its
    workers have started their apps): their process ids."""
    wait_port("127.0.0.1", port, 60, lambda: proc.poll() is None)
    deadline = time.monotonic() + 60
    while len(pids := answering(port, 10)) < 2:
        assert time.monotonic() < deadline and proc.poll() is None, "both workers do not serve"
    return pids


def test_workers_share_the_port_and_one_that_dies_is_started_again():
    port = free_port()
    proc = serve(port)
    try:
        first = serving(proc, port)
        assert first == {w.pid for w in workers_of(proc)}
        # the kernel spreads connections over both (SO_REUSEPORT: a hash of the client's port)
        assert answering(port) == first

        dead, survivor = sorted(first)
        killed = psutil.Process(dead)
        killed.send_signal(signal.SIGKILL)
        # gone (reaped by the server); connections it had accepted but not served are reset
        # meanwhile, as any server's are when a worker is killed
        psutil.wait_procs([killed], timeout=30)
        deadline = time.monotonic() + 60
        while len(now := {w.pid for w in workers_of(proc) if w.status() != psutil.STATUS_ZOMBIE} - {dead}) < 2:
            assert time.monotonic() < deadline, "the dead worker was not started again"
            assert survivor in answering(port, 5)  # the other serves meanwhile
            time.sleep(0.2)
        assert survivor in now and proc.poll() is None
        deadline = time.monotonic() + 60
        while answering(port) != now:  # the new one serves once its app has started
            assert time.monotonic() < deadline, "the restarted worker does not serve"
            time.sleep(0.2)
    finally:
        stop(proc, wait=20)
    assert proc.returncode == 0
    assert not any(psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
                   for pid in first | now)


def test_a_worker_that_cannot_start_stops_the_server():
    started = time.monotonic()
    proc = serve(free_port(), target="tests.integration.no_such_module:app")
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert time.monotonic() - started < STABLE_SECONDS + 30
    assert b"no_such_module" in out


def test_a_port_another_process_holds_stops_the_server():
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    try:
        proc = serve(holder.getsockname()[1])
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode != 0
        assert b"Address already in use" in out
    finally:
        holder.close()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_the_workers_stop_with_the_server(sig):
    port = free_port()
    proc = serve(port)
    try:
        serving(proc, port)
        workers = workers_of(proc)
        assert len(workers) == 2
        proc.send_signal(sig)  # the server alone: it stops its workers, or they notice it died
        gone, alive = psutil.wait_procs(workers, timeout=30)
        assert not alive
        if sig == signal.SIGTERM:
            assert proc.wait(10) == 0
    finally:
        stop(proc)
