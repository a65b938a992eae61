"""Gzip for a client that accepts it: the response as the front door sends it (api/front.py).

Litestar's compression middleware made a GzipFile (zlib's whole deflate state, a few hundred
KB allocated and cleared) for every request it saw and closed it after the response, even for a
response too small to compress or already compressed (a kept response, api/read_cache.py):
in the live_api bench's played mix that was about a tenth of the API process's CPU (py-spy),
spent on nothing. Here a compressor is made only for a body that is compressed:

- a body already carrying `Content-Encoding` (a kept response's kept gzip form) goes as it is;
- a whole body (no `more_body`) from `min_bytes` on is gzipped in one call, with its length;
- a body sent in parts is gzipped part by part, each flushed so that a client reads each part
  when it is sent, with no length (the server frames it);
- anything else goes as it is.

Either compressed form says `Vary: Accept-Encoding` (one who does not take gzip is sent the
plain body); the front door says it for a plain body of a compressible size (api/front.py).
The caller decides that the client takes gzip and which paths are never held in a compressor."""

from __future__ import annotations

import zlib
from typing import Any

_GZIP_WBITS = 31  # zlib's gzip framing: header, deflate stream, CRC-32 and size trailer


def _add_vary(headers: list) -> list:
    for i, (k, v) in enumerate(headers):
        if k.lower() == b"vary":
            if b"accept-encoding" in v.lower():
                return headers
            headers[i] = (k, v + b", Accept-Encoding")
            return headers
    headers.append((b"vary", b"Accept-Encoding"))
    return headers


class Gzip:
    """ASGI middleware gzipping HTTP responses at `level` (see the module's docstring)."""

    def __init__(self, app: Any, min_bytes: int, level: int) -> None:
        self.app = app
        self.min_bytes = min_bytes
        self.level = level

    async def __call__(self, scope, receive, send) -> None:
        start: dict | None = None
        stream: Any = None  # the compressor of a body sent in parts
        passing = False  # sent as it is from the first body on
        level, min_bytes = self.level, self.min_bytes

        async def gzip_send(message) -> None:
            nonlocal start, stream, passing
            kind = message["type"]
            if kind == "http.response.start":
                start = message
                return
            if kind != "http.response.body" or passing:
                await send(message)
                return
            body = message.get("body", b"")
            more = message.get("more_body", False)
            if start is not None:  # the first body: decide
                head, start = start, None
                headers = list(head.get("headers") or [])
                if any(k.lower() == b"content-encoding" for k, _ in headers):
                    passing = True
                elif more:
                    stream = zlib.compressobj(level, zlib.DEFLATED, _GZIP_WBITS)
                    headers = _add_vary([(k, v) for k, v in headers if k.lower() != b"content-length"])
                    headers.append((b"content-encoding", b"gzip"))
                elif len(body) >= min_bytes:
                    body = zlib.compress(body, level, _GZIP_WBITS)
                    headers = _add_vary([(k, v) for k, v in headers if k.lower() != b"content-length"])
                    headers += [(b"content-encoding", b"gzip"), (b"content-length", str(len(body)).encode())]
                    await send({**head, "headers": headers})
                    await send({**message, "body": body})
                    return
                else:
                    passing = True
                await send({**head, "headers": headers})
                if passing:
                    await send(message)
                    return
            if stream is None:  # a part after a whole body: nothing of ours to do
                await send(message)
                return
            data = stream.compress(body) + stream.flush(zlib.Z_SYNC_FLUSH if more else zlib.Z_FINISH)
            await send({**message, "body": data})

        await self.app(scope, receive, gzip_send)
