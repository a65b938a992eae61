"""`svc up`: one supervisor runs the whole stack in the foreground until Ctrl-C.

Children: the tansu broker (unless KAFKA_BOOTSTRAP), PostgreSQL (unless DATABASE_URL), the
projector, the API and, with sample data, a one-shot sample loader and the sandbox player.
Each child gets a pid file under `<data-dir>/run/` and a log under `<data-dir>/logs/`, rotated
by size (infra/child_logs.py); a child that dies is restarted with exponential backoff and the
reason is logged. Every child runs in
its own process group (and dies with the supervisor via PDEATHSIG), so shutdown leaves nothing
behind.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import structlog

from infra.api_server import api_command
from infra.child_logs import ChildLog
from infra.log_copy import LogCopy, LogCopyError
from infra.log_guard import check_read_models
from infra.db import connect, wait_for_database
from infra.migrate import migrate
from infra.parent_death import dies_with_parent
from infra.net import free_port, port_answers, split_address
from infra.postgres import database_url as embedded_database_url
from infra.postgres import clear_stale_lock, init_cluster, postgres_argv
from infra.settings import Settings, write_stack
from infra.topics import ensure_topics

log = structlog.get_logger("supervisor")

BACKOFF_START = 1.0  # the longest wait is Settings.restart_backoff_max
STABLE_AFTER = 60.0  # a child up this long has its backoff reset
STOP_TIMEOUT = 15.0
BROKER_READY_TIMEOUT = 1800.0





@dataclass
class Child:
    name: str
    argv: list[str]
    env: dict[str, str]
    user: str | None = None
    one_shot: bool = False  # exits 0 when its work is done; restarted only on failure
    stop_signal: int = signal.SIGTERM
    after: Callable[[], bool] = lambda: True  # start only once this holds
    proc: subprocess.Popen | None = None
    done: bool = False
    restarts: int = 0
    backoff: float = BACKOFF_START
    next_start: float = 0.0
    started_at: float = 0.0
    log_file: Path | None = None
    log: ChildLog | None = None
    pid_file: Path | None = None
    on_exit: list[str] = field(default_factory=list)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


class Supervisor:
    def __init__(self, settings: Settings, sample: bool = True) -> None:
        self.settings = settings
        self.sample = sample
        self.data_dir = settings.data_dir.resolve()
        self.run_dir = self.data_dir / "run"
        self.log_dir = self.data_dir / "logs"
        self.children: dict[str, Child] = {}
        self.stopping = False
        self.broker_address = settings.kafka_bootstrap
        self.database_url = settings.database_url
        self.long_poll = settings.broker_long_poll  # set for the children when we run the keeper

    # ---- set-up ------------------------------------------------------------------------------

    def _refuse_second_instance(self) -> None:
        pid_file = self.run_dir / "supervisor.pid"
        try:
            pid = int(pid_file.read_text())
            os.kill(pid, 0)
        except (FileNotFoundError, ValueError, ProcessLookupError):
            return
        except PermissionError:
            pass
        raise SystemExit(f"a stack already runs from {self.data_dir} (supervisor pid {pid}); stop it first")

    def _child_env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            SVC_DATA_DIR=str(self.data_dir),
            KAFKA_BOOTSTRAP=self.broker_address or "",
            DATABASE_URL=self.database_url or "",
            SVC_HOST=self.settings.host,
            SVC_PORT=str(self.settings.port),
            SVC_TOPIC_NAMESPACE=self.settings.topic_namespace,
            SVC_LOG_JSON="true",
            PYTHONUNBUFFERED="1",
        )
        if self.settings.redis_url:
            env["REDIS_URL"] = self.settings.redis_url
        if self.long_poll:
            env["SVC_BROKER_LONG_POLL"] = "true"
        return env

    def _plan(self) -> None:
        s = self.settings
        py = sys.executable
        # the API's port is promised but not bound yet (its child starts last): never hand it out
        promised = {s.port}
        if not s.kafka_bootstrap:
            port = free_port(avoid=promised)
            self.broker_address = f"127.0.0.1:{port}"
            # the log keeper: tansu behind a proxy that keeps its log in <data-dir>/log
            self._add(Child("broker", [py, "-m", "infra.log_keeper", "--data-dir", str(self.data_dir),
                                       "--port", str(port)], dict(os.environ)))
            # the keeper answers a waiting fetch when an acknowledged produce lands (docs/log.md):
            # the live path and the fan-out wait long instead of polling it
            self.long_poll = True
        if not s.database_url:
            pgdata = self.data_dir / "pg" / "data"
            user = init_cluster(pgdata)
            port = free_port(avoid=promised)
            self.database_url = embedded_database_url(port)
            # SIGINT asks PostgreSQL for a fast shutdown (clients cut, data flushed)
            self._add(Child("postgres", postgres_argv(pgdata, port), dict(os.environ), user=user,
                            stop_signal=signal.SIGINT))
        env = self._child_env()
        self._add(Child("projector", [py, "-m", "cli.main", "projector", "run"], env))
        api_argv, api_env = api_command(s.api_server, py, s.host, s.port, s.api_workers)
        self._add(Child("api", api_argv, {**env, **api_env}))
        if self.sample:
            self._add(Child("sample", [py, "-m", "cli.main", "sample", "load"], env, one_shot=True))
            self._add(Child(
                "sandbox", [py, "-m", "cli.main", "sandbox", "play", "--speed", str(s.sandbox_speed)], env,
                one_shot=True, after=lambda: self.children["sample"].done,
            ))
        else:  # the reference library and the strategy registry are the service's own content
            # one process for both datasets: four (one per kind and dataset) cost an interpreter
            # and its imports each, ~0.6 CPU-s, at the start of every stack
            self._add(Child("content", [py, "-m", "cli.main", "ingest", "content"], env, one_shot=True))

    def _add(self, child: Child) -> None:
        child.log_file = self.log_dir / f"{child.name}.log"
        child.pid_file = self.run_dir / f"{child.name}.pid"
        self.children[child.name] = child

    # ---- child lifecycle ---------------------------------------------------------------------

    def _start(self, child: Child) -> None:
        if child.name == "postgres":  # a killed server's lock may name a PID reused since
            clear_stale_lock(self.data_dir / "pg" / "data")
        if child.log is None:
            child.log = ChildLog(child.log_file, self.settings.log_max_bytes, self.settings.log_backups)
        child.proc = subprocess.Popen(
            child.argv, env=child.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            user=child.user, start_new_session=True, preexec_fn=dies_with_parent(), cwd=os.getcwd(),
        )
        child.log.attach(child.proc.stdout)
        child.started_at = time.monotonic()
        child.pid_file.write_text(f"{child.proc.pid}\n")
        log.info("started", child=child.name, pid=child.proc.pid, log=str(child.log_file))

    @staticmethod
    def _sweep(pgid: int) -> None:
        """Kill what is left of a child's process group (a granian worker outlives a killed main)."""
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def _reap(self, child: Child) -> None:
        """Notice a child that exited; schedule its restart (or mark a one-shot done)."""
        code = child.proc.returncode
        self._sweep(child.proc.pid)
        child.pid_file.unlink(missing_ok=True)
        child.proc = None
        if child.one_shot and code == 0:
            child.done = True
            log.info("finished", child=child.name)
            return
        why = f"killed by signal {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
        if time.monotonic() - child.started_at > STABLE_AFTER:
            child.backoff = BACKOFF_START
        child.next_start = time.monotonic() + child.backoff
        log.warning("child died; restarting", child=child.name, reason=why,
                    restart_in_s=child.backoff, restarts=child.restarts + 1, log=str(child.log_file))
        child.backoff = min(child.backoff * 2, self.settings.restart_backoff_max)
        child.restarts += 1

    def _stop(self, child: Child) -> None:
        if child.proc is not None and child.proc.poll() is not None:
            # exited and not reaped yet (a one-shot that finished just before the stop): what is
            # left of its group and its pid file go as a reap would take them
            self._sweep(child.proc.pid)
            child.pid_file.unlink(missing_ok=True)
            child.proc = None
        if not child.running:
            return
        try:
            os.killpg(child.proc.pid, child.stop_signal)
        except ProcessLookupError:
            return
        try:
            child.proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            log.warning("did not stop in time; killing", child=child.name)
            os.killpg(child.proc.pid, signal.SIGKILL)
            child.proc.wait()
        self._sweep(child.proc.pid)
        child.pid_file.unlink(missing_ok=True)
        log.info("stopped", child=child.name)

    # ---- readiness ---------------------------------------------------------------------------

    def _wait_ready(self) -> None:
        if "broker" in self.children:
            host, port = split_address(self.broker_address)
            # the keeper listens once it restored the kept log: give a long log its time
            self._wait(lambda: port_answers(host, port), "broker", BROKER_READY_TIMEOUT)
        asyncio.run(self._prepare())

    def _wait(self, check: Callable[[], bool], name: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if check():
                return
            child = self.children.get(name)
            if child is not None and not child.running:
                if child.log is not None:
                    child.log.drain()
                raise SystemExit(_last_words(child) or f"{name} exited while starting; see {child.log_file}")
            time.sleep(0.1)
        raise SystemExit(f"{name} did not become ready within {timeout}s")

    async def _prepare(self) -> None:
        """Migrations applied and every topic created before any service starts."""
        await wait_for_database(self.database_url, timeout=60)
        conn = await connect(self.database_url)
        try:
            applied = await migrate(conn)
        finally:
            await conn.close()
        log.info("migrated", applied=len(applied))
        ready = _with(self.settings, kafka_bootstrap=self.broker_address, database_url=self.database_url)
        await ensure_topics(ready)
        if "broker" in self.children:
            await check_read_models(ready)  # the restored log holds what the read models were built from

    # ---- main loop ---------------------------------------------------------------------------

    def run(self) -> int:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self._refuse_second_instance()
        (self.run_dir / "supervisor.pid").write_text(f"{os.getpid()}\n")
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, self._on_signal)
        try:
            if not self.settings.kafka_bootstrap:
                _check_log(self.data_dir)
            self._plan()
            for name in ("broker", "postgres"):
                if name in self.children:
                    self._start(self.children[name])
            self._wait_ready()
            write_stack(
                _with(self.settings, kafka_bootstrap=self.broker_address, database_url=self.database_url),
                supervisor_pid=os.getpid(),
                api_url=f"http://{self.settings.host}:{self.settings.port}",
                embedded={"broker": "broker" in self.children, "postgres": "postgres" in self.children},
            )
            log.info("stack up", api=f"http://{self.settings.host}:{self.settings.port}",
                     broker=self.broker_address, data_dir=str(self.data_dir))
            self._loop()
        finally:
            self.shutdown()
        return 0

    def _loop(self) -> None:
        while not self.stopping:
            now = time.monotonic()
            for child in self.children.values():
                if self.stopping:
                    break
                if child.proc is not None and child.proc.poll() is not None:
                    self._reap(child)
                if child.proc is None and not child.done and now >= child.next_start and child.after():
                    self._start(child)
                    if child.name in ("broker", "postgres") and child.restarts:
                        self._wait_ready()
            time.sleep(0.2)

    def _on_signal(self, signum, frame) -> None:
        if not self.stopping:
            log.info("stopping", signal=signal.Signals(signum).name)
        self.stopping = True

    def shutdown(self) -> None:
        self.stopping = True
        order = ["sandbox", "sample", "content", "api", "projector", "postgres", "broker"]
        for name in order:
            if name in self.children:
                self._stop(self.children[name])
        for child in self.children.values():
            if child.log is not None:
                child.log.close()
        (self.run_dir / "supervisor.pid").unlink(missing_ok=True)
        log.info("all stopped")


def _check_log(data_dir: Path) -> None:
    """Before anything is created in the data dir: its kept log can be opened (or is new)."""
    try:
        LogCopy.open(data_dir).close()
    except LogCopyError as exc:
        raise SystemExit(str(exc)) from None


def _last_words(child: Child) -> str | None:
    """The reason a child refused to start, when it said one (`refused: ...` in its log)."""
    try:
        lines = child.log_file.read_text(errors="replace").splitlines()[-20:]
    except OSError:
        return None
    for line in reversed(lines):
        if line.startswith("refused: "):
            return f"{child.name}: {line.removeprefix('refused: ')}"
    return None


def _with(settings: Settings, **changes) -> Settings:
    import msgspec

    return msgspec.structs.replace(settings, **changes)
