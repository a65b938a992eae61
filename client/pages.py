"""Pages of a list: `data` holds typed items; `auto_paging_iter()` follows `next_cursor`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Awaitable, Iterator
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Page(Generic[T]):
    def __init__(self, envelope: Any, fetch: Callable[[str], "Page[T]"]) -> None:
        self.envelope = envelope  # the decoded list envelope (or the slate, which is one too)
        self.data: list[T] = envelope.data
        self.has_more: bool = envelope.has_more
        self.next_cursor: str | None = envelope.next_cursor
        self._fetch = fetch

    def next_page(self) -> "Page[T] | None":
        return self._fetch(self.next_cursor) if self.has_more and self.next_cursor else None

    def auto_paging_iter(self) -> Iterator[T]:
        page: Page[T] | None = self
        while page is not None:
            yield from page.data
            page = page.next_page()

    def __iter__(self) -> Iterator[T]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)

    def __repr__(self) -> str:
        return f"<Page {len(self.data)} items has_more={self.has_more}>"


class AsyncPage(Generic[T]):
    def __init__(self, envelope: Any, fetch: Callable[[str], Awaitable["AsyncPage[T]"]]) -> None:
        self.envelope = envelope
        self.data: list[T] = envelope.data
        self.has_more: bool = envelope.has_more
        self.next_cursor: str | None = envelope.next_cursor
        self._fetch = fetch

    async def next_page(self) -> "AsyncPage[T] | None":
        return await self._fetch(self.next_cursor) if self.has_more and self.next_cursor else None

    async def auto_paging_iter(self) -> AsyncIterator[T]:
        page: AsyncPage[T] | None = self
        while page is not None:
            for item in page.data:
                yield item
            page = await page.next_page()

    def __iter__(self) -> Iterator[T]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)
