"""How the API process is started: the ASGI server serving `api.server:app` (SVC_API_SERVER).

Both serve the same app on one port, REST and the Wire alike; they differ in what an idle Wire
socket costs (docs/benchmarks.md, wire_memory):
- granian (Rust): fastest REST, but every WebSocket holds tungstenite's 128 KiB read buffer
  (granian gives it no WebSocketConfig, and has no setting for it): about 143 KiB a socket;
- uvicorn with uvloop, httptools and websockets' sans-I/O protocol: a few KiB a socket. Its
  permessage-deflate is off: a negotiated compressor and decompressor cost each socket about
  40 KiB more, and the Wire's messages are small JSON (granian never offers it either). Its
  X-Forwarded-For handling is off too: the app believes proxies only from SVC_TRUSTED_PROXIES.
"""

from __future__ import annotations

SERVERS = ("granian", "uvicorn")

# granian's allocator (jemalloc, built in) keeps the memory a closed Wire socket freed (about
# 120 KiB each) unless told to return freed pages at once; with this, 1,000 closed sockets give
# back all but a few KiB each (measured: tests/perf/bench_wire_memory.py, docs/benchmarks.md)
GRANIAN_ALLOCATOR_ENV = {"_RJEM_MALLOC_CONF": "dirty_decay_ms:0,muzzy_decay_ms:0"}


def api_command(server: str, python: str, host: str, port: int, workers: int = 1,
                app: str = "api.server:app", websockets: bool = True) -> tuple[list[str], dict[str, str]]:
    """The argv that serves `app`, and the environment variables it needs beside the service's."""
    if server == "granian":
        # its own asyncio loop, not uvloop (installed for uvicorn): on uvloop the app cannot see,
        # so cannot run before, granian's stop handlers (api/orderly_stop.py)
        argv = [python, "-m", "granian", "--interface", "asgi", "--host", host, "--port", str(port),
                "--workers", str(workers), "--no-access-log", "--log-level", "warning", "--loop", "asyncio"]
        return [*argv, *([] if websockets else ["--no-ws"]), app], dict(GRANIAN_ALLOCATOR_ENV)
    if server == "uvicorn":
        argv = [python, "-m", "uvicorn", "--host", host, "--port", str(port), "--workers", str(workers),
                "--no-access-log", "--log-level", "warning", "--loop", "uvloop", "--http", "httptools",
                "--ws", "websockets-sansio" if websockets else "none", "--ws-per-message-deflate", "false",
                "--no-proxy-headers", "--lifespan", "on"]
        return [*argv, app], {}
    raise ValueError(f"unknown API server {server!r}; one of {', '.join(SERVERS)}")
