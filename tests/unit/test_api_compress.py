"""api/compress.py: what the front door's gzip sends for each kind of response."""

from __future__ import annotations

import asyncio
import gzip
import zlib

from api.compress import Gzip


def _run(parts: list[bytes], headers: list[tuple[bytes, bytes]], min_bytes: int = 100) -> list[dict]:
    sent: list[dict] = []

    async def app(scope, receive, send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for i, part in enumerate(parts):
            await send({"type": "http.response.body", "body": part, "more_body": i < len(parts) - 1})

    async def send(message) -> None:
        sent.append(message)

    asyncio.run(Gzip(app, min_bytes, 1)({"type": "http"}, None, send))
    return sent


def _headers(message: dict) -> dict[bytes, bytes]:
    return dict(message["headers"])


def test_a_whole_body_from_the_minimum_on_is_gzipped_with_its_length_and_vary():
    body = b'{"data": "%s"}' % (b"x" * 500)
    start, sent = _run([body], [(b"content-type", b"application/json"), (b"content-length", b"514")])
    headers = _headers(start)
    assert headers[b"content-encoding"] == b"gzip" and headers[b"vary"] == b"Accept-Encoding"
    assert int(headers[b"content-length"]) == len(sent["body"]) < len(body)
    assert [k for k, _ in start["headers"]].count(b"content-length") == 1
    assert gzip.decompress(sent["body"]) == body


def test_vary_is_extended_not_repeated():
    start, _ = _run([b"y" * 200], [(b"vary", b"Origin")])
    assert [v for k, v in start["headers"] if k == b"vary"] == [b"Origin, Accept-Encoding"]
    start, _ = _run([b"y" * 200], [(b"vary", b"accept-encoding")])
    assert [v for k, v in start["headers"] if k == b"vary"] == [b"accept-encoding"]


def test_a_small_body_and_an_encoded_body_go_as_they_are():
    start, sent = _run([b"z" * 99], [(b"content-length", b"99")])
    assert b"content-encoding" not in _headers(start) and sent["body"] == b"z" * 99
    kept = gzip.compress(b"k" * 1000)
    start, sent = _run([kept], [(b"content-encoding", b"gzip"), (b"content-length", str(len(kept)).encode())])
    assert start["headers"] == [(b"content-encoding", b"gzip"), (b"content-length", str(len(kept)).encode())]
    assert sent["body"] == kept


def test_a_body_in_parts_is_gzipped_part_by_part_each_readable_when_sent():
    parts = [b"event: a\n\n" * 3, b"event: b\n\n", b""]
    start, *bodies = _run(parts, [(b"content-length", b"999")])
    headers = _headers(start)
    assert headers[b"content-encoding"] == b"gzip" and b"content-length" not in headers
    reader = zlib.decompressobj(31)
    assert [reader.decompress(b["body"]) for b in bodies] == parts  # no part waits for the next
    assert reader.eof and [b["more_body"] for b in bodies] == [True, True, False]
