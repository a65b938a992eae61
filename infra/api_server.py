"""How the API process is started: the ASGI server serving `api.server:app` (SVC_API_SERVER).

Each serves the same app on one port, REST and the Wire alike; they differ in what an idle Wire
socket costs and in REST throughput (docs/benchmarks.md, wire_memory and api):
- h2corn (Rust, the default): REST about as fast as granian, and an idle socket about 10 KiB in
  all (its own WebSocket framing, no fixed read buffer). Its permessage-deflate and its own pings
  are off (the Wire's messages are small JSON and the app pings on its own schedule); it trusts
  no X-Forwarded-For (the app believes proxies only from SVC_TRUSTED_PROXIES);
- granian (Rust): every WebSocket holds tungstenite's 128 KiB read buffer (granian 2.8.7-2.8.9
  give it no WebSocketConfig, and have no setting for it): about 143 KiB a socket;
- uvicorn with uvloop, httptools and websockets' sans-I/O protocol: about 10 KiB a socket too,
  but REST at about half of the Rust servers' on this machine. Its permessage-deflate is off: a
  negotiated compressor and decompressor cost each socket about 40 KiB more.
"""

from __future__ import annotations

SERVERS = ("h2corn", "granian", "uvicorn")

# granian's allocator (jemalloc, built in) keeps the memory a closed Wire socket freed (about
# 120 KiB each) unless told to return freed pages at once; with this, 1,000 closed sockets give
# back all but a few KiB each (measured: tests/perf/bench_wire_memory.py, docs/benchmarks.md)
GRANIAN_ALLOCATOR_ENV = {"_RJEM_MALLOC_CONF": "dirty_decay_ms:0,muzzy_decay_ms:0"}
# h2corn's allocator (mimalloc, built in) likewise: freed pages returned at once, not after a delay
H2CORN_ALLOCATOR_ENV = {"MIMALLOC_PURGE_DELAY": "0"}
# the request head h2corn reads, as big as granian's default HTTP/1 buffer (408 KiB), with no
# separate bound on the request line (h2corn's default 16 KiB would answer a long query string
# itself, before the app could say which parameter is too long)
HEAD_BYTES = 417_792
# h2corn's settings, as its Config's fields (infra/h2corn_serve.py).
# Its own pings and permessage-deflate off: the app pings on its own schedule (SVC_WIRE_PING_SECONDS)
# and the Wire's messages are small JSON; no forwarded headers (the app trusts SVC_TRUSTED_PROXIES);
# uvloop: with the asyncio loop an idle socket cost 1-5 KiB more and kept more after close
# (tests/integration/test_wire_memory.py)
H2CORN_OPTIONS = {
    "loop": "uvloop", "access_log": False, "lifespan": "on", "proxy_headers": False,
    "limit_request_head_size": HEAD_BYTES, "limit_request_line": 0,
    "websocket_ping_interval": 0, "websocket_per_message_deflate": False,
}


def api_command(server: str, python: str, host: str, port: int, workers: int = 1,
                app: str = "api.server:app", websockets: bool = True) -> tuple[list[str], dict[str, str]]:
    """The argv that serves `app`, and the environment variables it needs beside the service's."""
    if server == "h2corn":
        # served by our own entry point, one worker or several: stop signals reach the app first
        # (infra/h2corn_serve.py); h2corn's command line would close Wire sockets 1001 on a stop
        argv = [python, "-m", "infra.h2corn_serve", host, str(port), app]
        # (no switch for WebSockets off: `websockets=False` is granian's and uvicorn's only)
        return [*argv, *([f"--workers={workers}"] if workers > 1 else [])], dict(H2CORN_ALLOCATOR_ENV)
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
