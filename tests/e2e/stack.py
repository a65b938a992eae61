"""Drive a real `svc up` in a subprocess: the whole embedded stack, as a user runs it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from infra.net import free_port

SVC = [sys.executable, "-m", "cli.main"]


def embedded_env(**extra: str) -> dict[str, str]:
    """The environment of a fresh machine: no external broker, database or Redis."""
    env = {k: v for k, v in os.environ.items() if k not in ("KAFKA_BOOTSTRAP", "DATABASE_URL", "REDIS_URL")}
    env.update(extra)
    return env


class Stack:
    def __init__(self, data_dir: Path, sample: bool = False, **env: str) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.env = embedded_env(SVC_DATA_DIR=str(data_dir), **env)
        argv = [*SVC, "up", "--port", str(self.port)] + ([] if sample else ["--no-sample"])
        self.log = open(data_dir.parent / f"{data_dir.name}-up.log", "wb")
        self.proc = subprocess.Popen(argv, env=self.env, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def pid(self, name: str) -> int | None:
        try:
            return int((self.data_dir / "run" / f"{name}.pid").read_text())
        except (FileNotFoundError, ValueError):
            return None

    def wait_health(self, timeout: float = 90) -> dict:
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"svc up exited early: {self.log_text()}"
            try:
                body = httpx.get(f"{self.url}/health", timeout=2).json()
                if body.get("db") and body.get("migrated"):
                    return body
                last = body
            except httpx.HTTPError as exc:
                last = exc
            time.sleep(0.3)
        raise AssertionError(f"stack not healthy within {timeout}s: {last}\n{self.log_text()}")

    def wait_content(self, timeout: float = 120) -> None:
        """Until the one-shot `content` child (the reference library and the strategy registry,
        loaded by every `svc up --no-sample`) has finished: until then it may still append to
        `feed.reference`, so a test that counts the log's records must wait for it first."""
        up_log = self.data_dir.parent / f"{self.data_dir.name}-up.log"
        deadline = time.monotonic() + timeout
        while '"child": "content", "event": "finished"' not in up_log.read_text(errors="replace"):
            assert time.monotonic() < deadline, f"the content load did not finish within {timeout}s\n{self.log_text()}"
            assert self.proc.poll() is None, f"svc up exited early: {self.log_text()}"
            time.sleep(0.3)

    def wait_pid_change(self, name: str, old: int, timeout: float = 60) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid = self.pid(name)
            if pid and pid != old and alive(pid):
                return pid
            time.sleep(0.2)
        raise AssertionError(f"{name} was not restarted within {timeout}s\n{self.log_text()}")

    def svc(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run([*SVC, *args], env=self.env, capture_output=True, text=True, timeout=timeout)

    def svc_json(self, *args: str, timeout: float = 120):
        done = self.svc(*args, "--json", timeout=timeout)
        return done.returncode, json.loads(done.stdout) if done.stdout.strip() else None

    def stop(self, timeout: float = 60) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                raise
        self.log.close()
        return self.proc.returncode

    def log_text(self) -> str:
        self.log.flush()
        return (self.data_dir.parent / f"{self.data_dir.name}-up.log").read_text(errors="replace")[-4000:]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie is dead for our purposes
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def processes_of(data_dir: Path) -> list[int]:
    """Every live process started for the stack in `data_dir` (children inherit SVC_DATA_DIR)."""
    needle = f"SVC_DATA_DIR={data_dir}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            env = (entry / "environ").read_bytes().split(b"\0")
        except (FileNotFoundError, PermissionError, ProcessLookupError):
            continue
        if needle in env and alive(int(entry.name)):
            found.append(int(entry.name))
    return found
