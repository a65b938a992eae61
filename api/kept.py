"""Whole responses kept for reuse, each served with its own request ID. Pure.

Every resource carries `request_id` (spec 2.1), so no two bodies are equal; everything else is.
A kept body is stored as the bytes between the occurrences of the request ID it was first
served with (100 random bits: it occurs nowhere else) and served again by joining those bytes
around the new request's ID. Request IDs have one length and JSON writes them as they are, so
the result is exactly the body the route would have encoded with that ID, and its
`content-length` is unchanged.
"""

from __future__ import annotations


class Kept:
    __slots__ = ("status", "headers", "chunks", "size")

    def __init__(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes, request_id: str) -> None:
        self.status = status
        self.headers = headers
        self.chunks = tuple(body.split(request_id.encode()))
        self.size = len(body)

    def body(self, request_id: str) -> bytes:
        if len(self.chunks) == 1:
            return self.chunks[0]
        return request_id.encode().join(self.chunks)


class KeptStore:
    """Bounded by entries and bytes; cleared when full (keys of changed data are never asked
    for again, so clearing is how they go)."""

    def __init__(self, max_items: int = 4096, max_bytes: int = 64 * 1024 * 1024) -> None:
        self.max_items = max_items
        self.max_bytes = max_bytes
        self._items: dict[tuple, Kept] = {}
        self._bytes = 0

    def get(self, key: tuple) -> Kept | None:
        return self._items.get(key)

    def put(self, key: tuple, kept: Kept) -> None:
        if kept.size > self.max_bytes // 16:
            return  # one huge body must not push everything else out
        if len(self._items) >= self.max_items or self._bytes + kept.size > self.max_bytes:
            self._items.clear()
            self._bytes = 0
        old = self._items.get(key)
        if old is not None:
            self._bytes -= old.size
        self._items[key] = kept
        self._bytes += kept.size

    def __len__(self) -> int:
        return len(self._items)
