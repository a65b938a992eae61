"""Resources kept by the versions of the rows they were built from.

A row's version is the transaction that wrote it (Postgres `xmin`, new with every insert or
update), so the versions of every row a resource is built from name that resource exactly: the
same versions, the same resource. Reads are far more frequent than changes, so a route first
reads the versions (a few integers) and builds, from whole rows, only what it has not built
before. A changed row is simply another key; the store is bounded and cleared when full. Items
are shared between requests and never changed: each request gets a copy with its own request ID.
"""

from __future__ import annotations

from typing import Generic, TypeVar

import msgspec

T = TypeVar("T", bound=msgspec.Struct)


class Versioned(Generic[T]):
    def __init__(self, max_items: int = 4096) -> None:
        self.max_items = max_items
        self._items: dict[tuple, T] = {}

    def get(self, key: tuple) -> T | None:
        return self._items.get(key)

    def put(self, key: tuple, item: T) -> T:
        if len(self._items) >= self.max_items:
            self._items.clear()
        self._items[key] = item
        return item

    @staticmethod
    def for_request(item: T, request_id: str | None) -> T:
        return msgspec.structs.replace(item, request_id=request_id)
