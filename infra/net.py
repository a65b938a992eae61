"""Loopback ports: pick a free one, wait for one to answer."""

from __future__ import annotations

import random
import socket
import time
from pathlib import Path

# Ports are picked below the kernel's ephemeral range: a port from that range (what binding to
# port 0 gives) can be handed to some process's outgoing connection before our server binds it,
# and the server then fails "Address already in use" for as long as that connection lives (seen
# in CI: the API child of a test stack restarting for a minute). Above the usual service ports.
_PICK_FROM = 20000
_EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
_handed_out: set[int] = set()  # never the same port twice from one process


def _ephemeral_low() -> int:
    try:
        return int(_EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def _bindable(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host: str = "127.0.0.1", avoid: frozenset[int] | set[int] = frozenset()) -> int:
    """A port nothing is bound to, outside the ephemeral range where the kernel has one, and
    none of `avoid` (ports promised to a process that has not bound them yet)."""
    low = _ephemeral_low()
    if low - _PICK_FROM >= 1000:
        for _ in range(200):
            port = random.randrange(_PICK_FROM, low)
            if port not in _handed_out and port not in avoid and _bindable(host, port):
                _handed_out.add(port)
                return port
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((host, 0))
            port = s.getsockname()[1]
        if port not in avoid:
            return port


def port_answers(host: str, port: int, timeout: float = 0.3) -> bool:
    try:
        socket.create_connection((host, port), timeout).close()
        return True
    except OSError:
        return False


def wait_port(host: str, port: int, timeout: float, is_alive=lambda: True) -> None:
    """Block until host:port accepts a connection; fail early if the owner died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if port_answers(host, port):
            return
        if not is_alive():
            raise RuntimeError(f"process behind {host}:{port} exited before it answered")
        time.sleep(0.05)
    raise TimeoutError(f"{host}:{port} did not answer within {timeout}s")


def split_address(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host, int(port)
