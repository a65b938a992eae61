"""A closed-loop HTTP/1.1 load generator for when `wrk` is not installed: N keep-alive connections,
each sending its next request when the last answer arrived. Run in its own process so it does not
share the server's event loop; prints one JSON line: requests, seconds, errors, latencies (ms) p50/p99.

    python -m tests.perf.http_load URL --connections 64 --seconds 10 [--header "K: V"]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from urllib.parse import urlsplit


async def _client(host: str, port: int, request: bytes, stop: float, latencies: list[float], errors: list[int]) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        while time.perf_counter() < stop:
            started = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head[9:12])
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            await reader.readexactly(length)
            latencies.append((time.perf_counter() - started) * 1000)
            if status >= 400:
                errors.append(status)
    finally:
        writer.close()


async def _main(url: str, connections: int, seconds: float, headers: list[str]) -> dict:
    parts = urlsplit(url)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    extra = "".join(f"{h}\r\n" for h in headers)
    request = f"GET {target} HTTP/1.1\r\nHost: {parts.hostname}\r\n{extra}\r\n".encode()
    latencies: list[float] = []
    errors: list[int] = []
    started = time.perf_counter()
    stop = started + seconds
    await asyncio.gather(*(_client(parts.hostname, parts.port, request, stop, latencies, errors) for _ in range(connections)))
    elapsed = time.perf_counter() - started
    latencies.sort()
    pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] if latencies else 0.0  # noqa: E731
    return {"requests": len(latencies), "seconds": elapsed, "errors": len(errors), "p50_ms": pick(0.5), "p99_ms": pick(0.99)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--header", action="append", default=[])
    args = parser.parse_args()
    print(json.dumps(asyncio.run(_main(args.url, args.connections, args.seconds, args.header))))


if __name__ == "__main__":
    main()
