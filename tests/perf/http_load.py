"""A closed-loop HTTP/1.1 load generator for when `wrk` is not installed: N keep-alive connections,
each sending its next request when the last answer arrived. Run in its own process so it does not
share the server's event loop; prints one JSON line: requests, seconds, errors, latencies (ms) p50/p99.
Several URLs (same host): a mix, each connection taking them in turn from its own starting point;
`paths` then gives requests, errors and p50/p99 per URL path as well.

    python -m tests.perf.http_load URL [URL ...] --connections 64 --seconds 10 [--header "K: V"]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from urllib.parse import urlsplit


async def _client(host: str, port: int, requests: list[bytes], first: int, stop: float,
                  latencies: list[list[float]], errors: list[list[int]]) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    n = first
    try:
        while time.perf_counter() < stop:
            i = n % len(requests)
            n += 1
            started = time.perf_counter()
            writer.write(requests[i])
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head[9:12])
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            await reader.readexactly(length)
            latencies[i].append((time.perf_counter() - started) * 1000)
            if status >= 400:
                errors[i].append(status)
    finally:
        writer.close()


def _pick(latencies: list[float], q: float) -> float:
    return latencies[min(len(latencies) - 1, int(q * len(latencies)))] if latencies else 0.0


async def _main(urls: list[str], connections: int, seconds: float, headers: list[str]) -> dict:
    parts = [urlsplit(url) for url in urls]
    extra = "".join(f"{h}\r\n" for h in headers)
    targets = [p.path + (f"?{p.query}" if p.query else "") for p in parts]
    requests = [f"GET {target} HTTP/1.1\r\nHost: {parts[0].hostname}\r\n{extra}\r\n".encode() for target in targets]
    latencies: list[list[float]] = [[] for _ in urls]
    errors: list[list[int]] = [[] for _ in urls]
    started = time.perf_counter()
    stop = started + seconds
    await asyncio.gather(*(_client(parts[0].hostname, parts[0].port, requests, c, stop, latencies, errors)
                           for c in range(connections)))
    elapsed = time.perf_counter() - started
    every = sorted(ms for per_url in latencies for ms in per_url)
    out = {"requests": len(every), "seconds": elapsed, "errors": sum(map(len, errors)), "p50_ms": _pick(every, 0.5),
           "p99_ms": _pick(every, 0.99)}
    if len(urls) > 1:
        out["paths"] = {}
        for target, per_url, errs in zip(targets, latencies, errors):
            per_url.sort()
            out["paths"][target] = {"requests": len(per_url), "errors": len(errs), "statuses": sorted(set(errs)),
                                    "p50_ms": _pick(per_url, 0.5), "p99_ms": _pick(per_url, 0.99)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url", nargs="+")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--header", action="append", default=[])
    args = parser.parse_args()
    print(json.dumps(asyncio.run(_main(args.url, args.connections, args.seconds, args.header))))


if __name__ == "__main__":
    main()
