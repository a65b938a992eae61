"""What changed in the read models, as far as this process has been told. Pure.

Each served table of each dataset schema has a counter, bumped by every change notification
(`api/listen.py`); `epoch` is bumped whenever notifications may have been missed (the listener
(re)connected, a rebuild swapped the whole schema). Counters only grow, so the tuple
`version(schema, tables)` read before building a response names the state it was built from:
a cache keyed by it is never served after a change it has heard of, and costs no query while
nothing changed.
"""

from __future__ import annotations

from collections.abc import Sequence


class Changes:
    def __init__(self) -> None:
        self.epoch = 0
        self._counts: dict[tuple[str, str], int] = {}

    def changed(self, schema: str, table: str) -> None:
        """A notification: `table` of `schema` changed (`*`: every table)."""
        if table == "*":
            self.epoch += 1
        else:
            key = (schema, table)
            self._counts[key] = self._counts.get(key, 0) + 1

    def missed(self) -> None:
        """Notifications may have been lost: whatever was built before is unknown now."""
        self.epoch += 1

    def version(self, schema: str, tables: Sequence[str]) -> tuple[int, ...]:
        counts = self._counts
        return (self.epoch, *[counts.get((schema, t), 0) for t in tables])
