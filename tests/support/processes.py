"""Stopping a child process a test or bench started: politely, then for sure."""

from __future__ import annotations

import os
import signal
import subprocess


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
