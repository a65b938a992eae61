"""A closed-loop load generator for POST /v1/answers (raw HTTP/1.1 keep-alive connections, in its
own process so it shares no event loop with the server): each connection posts the next question
of the list when its last answer arrived. `--mode answer` times the finished JSON answer;
`--mode stream` asks for the event stream and times the arrival of `answer.started` (then reads
the stream to its end); `--mode health` times GET /health. Prints one JSON line.

    python -m tests.perf.answer_load URL QUESTIONS.json --connections 16 --seconds 10 --header "K: V"
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from urllib.parse import urlsplit


async def _read_response(reader: asyncio.StreamReader, started: float, mark: bytes | None) -> tuple[int, float]:
    """Status, and ms until `mark` was seen (or the whole response, when `mark` is None)."""
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    length, chunked = None, False
    for line in head.split(b"\r\n"):
        lower = line.lower()
        if lower.startswith(b"content-length:"):
            length = int(line[15:])
        elif lower.startswith(b"transfer-encoding:") and b"chunked" in lower:
            chunked = True
    seen = None
    if not chunked:
        body = await reader.readexactly(length or 0)
        if mark is None or mark in body:
            seen = time.perf_counter()
    else:
        while True:
            size = int((await reader.readuntil(b"\r\n")).strip().split(b";")[0], 16)
            data = await reader.readexactly(size + 2)
            if seen is None and mark is not None and mark in data:
                seen = time.perf_counter()
            if size == 0:
                break
        if mark is None:
            seen = time.perf_counter()
    return status, ((seen or time.perf_counter()) - started) * 1000


async def _client(host: str, port: int, requests: list[bytes], offset: int, stop: float, mark: bytes | None,
                  latencies: list[float], errors: list[int]) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    n = offset
    try:
        while time.perf_counter() < stop:
            request = requests[n % len(requests)]
            n += 1
            started = time.perf_counter()
            writer.write(request)
            status, ms = await _read_response(reader, started, mark)
            if status >= 500 or status in (400, 401, 403, 429):
                errors.append(status)
            else:
                latencies.append(ms)
    finally:
        writer.close()


def _requests(parts, questions: list[str], mode: str, headers: list[str]) -> list[bytes]:
    extra = "".join(f"{h}\r\n" for h in headers)
    host = f"Host: {parts.hostname}\r\n"
    if mode == "health":
        return [f"GET /health HTTP/1.1\r\n{host}\r\n".encode()]
    accept = "Accept: text/event-stream\r\n" if mode == "stream" else ""
    out = []
    for q in questions:
        body = json.dumps({"question": q}).encode()
        out.append(f"POST /v1/answers HTTP/1.1\r\n{host}{extra}{accept}Content-Type: application/json\r\n"
                   f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
    return out


async def _main(url: str, questions: list[str], mode: str, connections: int, seconds: float, headers: list[str]) -> dict:
    parts = urlsplit(url)
    requests = _requests(parts, questions, mode, headers)
    mark = b"answer.started" if mode == "stream" else None
    latencies: list[float] = []
    errors: list[int] = []
    started = time.perf_counter()
    stop = started + seconds
    await asyncio.gather(*(_client(parts.hostname, parts.port, requests, i * 7, stop, mark, latencies, errors)
                           for i in range(connections)))
    elapsed = time.perf_counter() - started
    latencies.sort()
    pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] if latencies else 0.0  # noqa: E731
    return {"requests": len(latencies), "seconds": elapsed, "errors": len(errors), "p50_ms": pick(0.5),
            "p99_ms": pick(0.99), "rate": len(latencies) / elapsed}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("questions")
    parser.add_argument("--mode", choices=("answer", "stream", "health"), default="answer")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--header", action="append", default=[])
    args = parser.parse_args()
    with open(args.questions, encoding="utf-8") as fh:
        questions = json.load(fh)
    print(json.dumps(asyncio.run(_main(args.url, questions, args.mode, args.connections, args.seconds, args.header))))


if __name__ == "__main__":
    main()
