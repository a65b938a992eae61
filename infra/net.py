"""Loopback ports: pick a free one, wait for one to answer."""

from __future__ import annotations

import socket
import time


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


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
