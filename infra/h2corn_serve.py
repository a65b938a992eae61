"""The API under h2corn: `python -m infra.h2corn_serve HOST PORT MODULE:APP [--workers N]` (how
infra/api_server.py starts it, SVC_API_WORKERS).

Every worker is an h2corn `Server` served in a process of its own, never under h2corn's own
supervisor (its command line). On SIGINT/SIGTERM that supervisor tells each worker's Rust side
to stop straight away (a pipe, not a signal): every WebSocket is closed 1001 before the app could
close it in order (api/orderly_stop.py: 4201 once its session is resumable elsewhere; SSE
streams a `drain`). Served here, the stop signals reach the loop's handlers only, which the app
takes over at startup and hands on to `Server.shutdown` when its connections are closed.

One worker: served in this process. Several: this process binds one listener per worker on the
port (SO_REUSEPORT, `listening_sockets`) and starts that many worker processes (`--worker-fd`),
each serving its inherited listener (h2corn's `fd://`). It
forwards a stop signal to every worker (`svc up` signals the whole process group anyway: a
worker stops in order once however many it gets) and waits for them, at most STOP_SECONDS, then
kills what is left. A worker that exits is started again, unless it exited with an error within
STABLE_SECONDS of its start (it cannot start: the app does not import, say): then the others are
stopped and this process exits with its code, for `svc up`'s supervisor to restart with backoff
(one killed by a signal, the OOM killer's say, is started again however young).
A worker is told to stop if this process dies (even by SIGKILL)."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import signal
import socket
import subprocess
import sys
import time

import structlog
import uvloop
from h2corn import Config, Server

from infra.api_server import H2CORN_OPTIONS
from infra.parent_death import dies_with_parent

log = structlog.get_logger("api.workers")
BACKLOG = 1024  # h2corn's own default for the sockets it binds
STOP_SECONDS = 12.0  # within `svc up`'s 15 s for a child to stop (infra/supervisor.py STOP_TIMEOUT)
STABLE_SECONDS = 10.0  # a worker that exits sooner after its start cannot start: no restart
RESTART_SECONDS = 1.0  # between a worker's exit and its restart
POLL_SECONDS = 0.1


async def _serve(bind: str, target: str) -> None:
    module, _, name = target.partition(":")
    app = getattr(importlib.import_module(module), name)
    server = Server(app, Config(bind=(bind,), **H2CORN_OPTIONS))
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        # plain handlers, not the loop's: uvloop does not show its own, so the app could not
        # take them over (api/orderly_stop.py); this one only asks the loop to stop the server
        signal.signal(sig, lambda sig, frame: loop.call_soon_threadsafe(server.shutdown))
    await server.serve()


def listening_sockets(host: str, port: int, count: int) -> list[socket.socket]:
    """One listener per worker, all bound to the port with SO_REUSEPORT: the kernel spreads new
    connections evenly over them (by a hash of the client's address and port). One listener
    shared by every worker (h2corn's supervisor's way) leaves it to whichever worker wakes first,
    and one took every connection in a test. A port another process holds without SO_REUSEPORT
    is an error here; this process keeps them all open, so a restarted worker's connections
    wait in its listener's queue meanwhile."""
    family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket(family, socket.SOCK_STREAM)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sock.bind((host, port))
            port = sock.getsockname()[1]  # port 0: the one the kernel chose, for every listener
            sock.listen(BACKLOG)
            sock.setblocking(False)
            sock.set_inheritable(True)
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    return sockets


class Workers:
    """Worker processes, each serving its inherited listener, started, restarted and stopped here."""

    def __init__(self, listeners: list[socket.socket], target: str) -> None:
        self.listeners, self.target = listeners, target
        self.procs: dict[int, subprocess.Popen] = {}  # by slot
        self.started_at: dict[int, float] = {}
        self.stopping = False

    def start(self, slot: int) -> None:
        fd = self.listeners[slot].fileno()
        argv = [sys.executable, "-m", "infra.h2corn_serve", "--worker-fd", str(fd), self.target]
        # told to stop (SIGTERM: in order) if this process dies, even by SIGKILL
        self.procs[slot] = subprocess.Popen(argv, pass_fds=(fd,), stdin=subprocess.DEVNULL,
                                            preexec_fn=dies_with_parent())
        self.started_at[slot] = time.monotonic()
        log.info("worker started", worker=slot, pid=self.procs[slot].pid)

    def signal_all(self, sig: int) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                try:
                    proc.send_signal(sig)
                except ProcessLookupError:
                    pass

    def run(self) -> int:
        """Serve until told to stop (0) or a worker cannot start (its exit code, at least 1)."""
        for slot in range(len(self.listeners)):
            self.start(slot)
        restarts: dict[int, float] = {}  # slot -> when to start it again
        while not self.stopping:
            now = time.monotonic()
            for slot, proc in list(self.procs.items()):
                code = proc.poll()
                if code is None or slot in restarts:
                    continue
                if code > 0 and now - self.started_at[slot] < STABLE_SECONDS:  # it gave up, not killed
                    log.error("worker exited at start; stopping the others", worker=slot, pid=proc.pid, code=code)
                    self.stop()
                    return code if code > 0 else 1
                log.warning("worker exited; starting it again", worker=slot, pid=proc.pid, code=code,
                            restart_in_s=RESTART_SECONDS)
                restarts[slot] = now + RESTART_SECONDS
            for slot, at in list(restarts.items()):
                if now >= at and not self.stopping:
                    del restarts[slot]
                    self.start(slot)
            time.sleep(POLL_SECONDS)
        self.stop()
        return 0

    def stop(self) -> None:
        """Every worker stops in order (SIGTERM: the app closes its connections first), or is
        killed after STOP_SECONDS."""
        self.stopping = True
        self.signal_all(signal.SIGTERM)
        deadline = time.monotonic() + STOP_SECONDS
        for slot, proc in self.procs.items():
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.warning("worker did not stop in time; killing", worker=slot, pid=proc.pid)
                proc.kill()
                proc.wait()


def serve_workers(host: str, port: int, target: str, count: int) -> int:
    from infra.logs import configure_logging
    from infra.settings import load_settings

    configure_logging(load_settings(), "api")  # as the app's own (api/server.py)
    listeners = listening_sockets(host, port, count)
    workers = Workers(listeners, target)

    def on_signal(sig, frame) -> None:
        # only a flag: the loop in `run` stops the workers (a signal handler must not wait)
        workers.stopping = True

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, on_signal)
    try:
        return workers.run()
    finally:
        if not all(proc.poll() is not None for proc in workers.procs.values()):
            workers.stop()
        for listener in listeners:
            listener.close()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m infra.h2corn_serve")
    parser.add_argument("host", nargs="?")
    parser.add_argument("port", nargs="?", type=int)
    parser.add_argument("target", help="MODULE:APP")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--worker-fd", type=int, help=argparse.SUPPRESS)  # a worker: serve this inherited listener
    args = parser.parse_args(argv)
    if args.worker_fd is not None:
        uvloop.run(_serve(f"fd://{args.worker_fd}", args.target))
        return 0
    if args.host is None or args.port is None:
        parser.error("HOST and PORT are required")
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    if args.workers == 1:
        uvloop.run(_serve(f"{args.host}:{args.port}", args.target))
        return 0
    return serve_workers(args.host, args.port, args.target, args.workers)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
