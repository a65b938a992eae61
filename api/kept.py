"""What the API keeps between requests, and by what it knows a kept thing is still current. Pure.

One store, three keys, from cheapest to dearest to check:

- Whole responses (`Kept` in a `Store`, api/read_cache.py), keyed by the per-table change
  counters Postgres notifications bump (api/changes.py, api/listen.py): serving one costs no
  query at all. Only while the listener is connected.
- Resources (a game list item, a market detail: `Versioned`), keyed by the versions (`xmin`) of
  the rows they were built from, read with one small query on every call: the route builds only
  what it has not built from exactly those rows. This is what the routes fall back to while the
  listener is not connected, and what rebuilds a kept response after a change cheaply.
- Values derived from a whole table (the answers' name index, library and strategy names:
  `Rechecked`), keyed by the table's version (row count and newest `xmin`,
  api/queries/versions.py), read at most once per `recheck_seconds`.

Every store is bounded and cleared when full: keys of changed data are never asked for again,
so clearing is how they go, and nothing is spent on recency bookkeeping on the hot path.
(API keys are kept by api/access/service.py under rules of their own: revocation, not versions.)

A kept response body is stored as the bytes between the occurrences of the request ID it was
first served with (every resource carries `request_id`, so no two bodies are equal; everything
else is; 100 random bits occur nowhere else) and served again by joining those bytes around the
new request's ID. Request IDs have one length and JSON writes them as they are, so the result
is exactly the body the route would have encoded with that ID, and its `content-length` is
unchanged.

Its gzip encoding is kept the same way, so a kept response is not compressed again per request:
each stretch between request IDs is deflated once, ending byte-aligned (a sync flush), and a
request's ID goes between them as a stored (uncompressed) deflate block. A stretch may refer
back into the stretches before it (a list's items are alike: compressed alone, each stretch
would compress to half as well): the stretches are deflated as one stream, in whose window each
request ID's place holds as many bytes of a value the body never holds (`Kept._deflate`), so
no match can reach into an ID and every distance is what the client's decompressor counts over
the real ID. The gzip trailer's CRC-32 is computed over the joined plain body per request
(microseconds). The result is exactly `body(request_id)` gzipped (tests/unit/test_api_changes.py).
"""

from __future__ import annotations

import struct
import time
import zlib
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

import msgspec

V = TypeVar("V")
S = TypeVar("S", bound=msgspec.Struct)


class Store(Generic[V]):
    """Bounded by entries and, when `size` is given, by the sum of the sizes; cleared when full.
    A value larger than a sixteenth of `max_bytes` is not kept (it must not push everything
    else out)."""

    def __init__(self, max_items: int = 4096, max_bytes: int | None = None,
                 size: Callable[[V], int] | None = None) -> None:
        self.max_items = max_items
        self.max_bytes = max_bytes
        self._size = size
        self._items: dict[Hashable, V] = {}
        self._bytes = 0

    def get(self, key: Hashable) -> V | None:
        return self._items.get(key)

    def put(self, key: Hashable, value: V) -> V:
        size = 0
        if self._size is not None and self.max_bytes is not None:
            size = self._size(value)
            if size > self.max_bytes // 16:
                return value
        if len(self._items) >= self.max_items or (
                self.max_bytes is not None and self._bytes + size > self.max_bytes):
            self._items.clear()
            self._bytes = 0
        old = self._items.get(key)
        if old is not None and self._size is not None:
            self._bytes -= self._size(old)
        self._items[key] = value
        self._bytes += size
        return value

    def __len__(self) -> int:
        return len(self._items)


# a gzip member's header: deflate, no name or flags, no mtime, no extra flags, unknown OS (RFC 1952)
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"


def _stored_block(data: bytes) -> bytes:
    """A non-final stored deflate block holding `data` (RFC 1951 3.2.4), for a byte-aligned stream."""
    n = len(data)
    return b"\x00" + struct.pack("<HH", n, n ^ 0xFFFF) + data


class Kept:
    """One kept response: status, headers and the body around its first request ID, plain and,
    once a client has asked for it, deflated (`gzip_body`)."""

    __slots__ = ("status", "headers", "chunks", "size", "_rid_length", "_deflated", "_gzip_level")

    def __init__(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes, request_id: str) -> None:
        self.status = status
        self.headers = headers
        self.chunks = tuple(body.split(request_id.encode()))
        self.size = len(body)
        self._rid_length = len(request_id.encode())
        self._deflated: tuple[bytes, ...] | None = None
        self._gzip_level = -1

    def body(self, request_id: str) -> bytes:
        if len(self.chunks) == 1:
            return self.chunks[0]
        return request_id.encode().join(self.chunks)

    def gzip_body(self, request_id: str, level: int) -> bytes:
        """`body(request_id)` as a gzip stream; the chunks are deflated at the first call (at
        `level`) and kept."""
        deflated = self._deflated
        if deflated is None or level != self._gzip_level:
            deflated = self._deflated = self._deflate(level)
            self._gzip_level = level
        rid = request_id.encode()
        plain = self.body(request_id)
        trailer = struct.pack("<II", zlib.crc32(plain), len(plain) & 0xFFFFFFFF)
        if len(deflated) == 1:
            return b"".join((_GZIP_HEADER, deflated[0], trailer))
        return b"".join((_GZIP_HEADER, _stored_block(rid).join(deflated), trailer))

    def _deflate(self, level: int) -> tuple[bytes, ...]:
        """The stretches deflated as one stream, each ending byte-aligned (a sync flush); in
        the compressor's window each request ID's place holds as many bytes of a value the body
        never holds (deflated too, and those blocks dropped: the ID goes there as a stored block
        per request), so no match reaches into an ID and every distance is what the client's
        decompressor counts over the real one. One compressor for the whole body: a kept slate
        (25 items, 27 stretches) deflated in 0.09 ms where a compressor per stretch primed with the
        body before it as its dictionary took 2.1 ms, on the event loop at every build."""
        chunks = self.chunks
        last = len(chunks) - 1
        whole = b"".join(chunks) if last else b""
        hole = next((bytes([b]) for b in range(256) if bytes([b]) not in whole), None)  # JSON: any control byte
        if hole is None:  # every byte value present (not JSON): each stretch alone
            return tuple(self._alone(chunk, level, i < last) for i, chunk in enumerate(chunks))
        d = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS)  # raw deflate: the gzip framing is ours
        gap = hole * self._rid_length
        out = []
        for i, chunk in enumerate(chunks):
            if i:
                d.compress(gap)
                d.flush(zlib.Z_SYNC_FLUSH)  # the ID's place in the window; its blocks dropped
            out.append(d.compress(chunk) + d.flush(zlib.Z_SYNC_FLUSH if i < last else zlib.Z_FINISH))
        return tuple(out)

    @staticmethod
    def _alone(chunk: bytes, level: int, more: bool) -> bytes:
        d = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS)
        return d.compress(chunk) + d.flush(zlib.Z_SYNC_FLUSH if more else zlib.Z_FINISH)


def _kept_size(kept: Kept) -> int:
    return kept.size


class KeptStore(Store[Kept]):
    """Whole responses, bounded by entries and bytes."""

    def __init__(self, max_items: int = 4096, max_bytes: int = 64 * 1024 * 1024) -> None:
        super().__init__(max_items, max_bytes, _kept_size)


class Versioned(Store[S]):
    """Resources by the versions of the rows they were built from: the same versions, the same
    resource. Items are shared between requests and never changed: each request gets a copy
    with its own request ID."""

    @staticmethod
    def for_request(item: S, request_id: str | None) -> S:
        return msgspec.structs.replace(item, request_id=request_id)


class Rechecked(Generic[V]):
    """A value per key (a dataset schema) built again only when its version changed; the
    version is read at most once per `recheck_seconds`, so a burst of calls costs one read."""

    def __init__(self, recheck_seconds: float) -> None:
        self.recheck_seconds = recheck_seconds
        self._held: dict[Hashable, tuple[Hashable, float, V]] = {}

    async def get(self, key: Hashable, version: Callable[[], Awaitable[Hashable]],
                  build: Callable[[], Awaitable[V]]) -> V:
        now = time.monotonic()
        held = self._held.get(key)
        if held is not None and now - held[1] < self.recheck_seconds:
            return held[2]
        current = await version()
        value = held[2] if held is not None and held[0] == current else await build()
        self._held[key] = (current, now, value)
        return value
