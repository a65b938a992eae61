"""Bounded memos of pure results (a price's float, a market text's checked lines, a book's
cleaned title): a hit is a plain dict lookup at the call site; a miss stores through `remember`,
which empties the memo first when it is full, so a hostile file of distinct values empties it
rather than growing it, and a result never depends on what the memo holds."""

from __future__ import annotations

from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


def remember(memo: dict[K, V], key: K, value: V, limit: int) -> V:
    """Store `value` under `key` (emptying `memo` first when it holds `limit` entries); returns it."""
    if len(memo) >= limit:
        memo.clear()
    memo[key] = value
    return value
