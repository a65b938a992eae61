"""Child processes a test or bench starts: the log keeper as `svc up` runs it, and stopping any
of them politely, then for sure."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from infra.net import free_port, wait_port


def start_keeper(data_dir: Path, log_path: Path) -> tuple[subprocess.Popen, int]:
    """tansu behind the log keeper (its copy in `data_dir`), as `svc up` runs its broker; the
    process and its port, once it listens (after restoring what `data_dir` holds)."""
    port = free_port()
    with open(log_path, "ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "infra.log_keeper", "--data-dir", str(data_dir),
                                 "--port", str(port)], stderr=out)
    wait_port("127.0.0.1", port, 60, lambda: proc.poll() is None)
    return proc, port


def stop(proc: subprocess.Popen, wait: float = 10, group: bool = False) -> None:
    """SIGTERM, then SIGKILL if it has not exited within `wait` s (its whole process group when
    `group`: granian's worker outlives a killed parent otherwise)."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(wait)
    except subprocess.TimeoutExpired:
        if group:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
        proc.wait(wait)
