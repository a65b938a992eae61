"""Giving the memory of closed connections back to the system.

Two things keep what a closed Wire socket held (measured with 1,000 sockets under uvicorn,
tests/perf/bench_wire_memory.py):
- reference cycles: the server's own objects for a connection (uvicorn's protocol and its HTTP
  parser's callbacks, uvloop's transport, Litestar's WebSocket and its scope state) refer to
  each other, so only the cycle collector frees them; and as they lived long, they are in its
  oldest generation, whose full pass an idle server may not run for hours;
- glibc's malloc keeps freed chunks inside its heaps (a heap shrinks only from its top, which
  the next long-lived allocation pins); `malloc_trim` returns every free page at once.
So within `DELAY` seconds of the close that makes as many connections closed since the last
time as a quarter of those still open (at least `COLLECT_MIN`): a full collection, then a trim
(on a thread, ctypes lets go of the GIL). Not after every close: trimming after single closes
stalled the other sockets' deliveries (tests/integration/test_wire_slow.py's fast reader got
nothing for 30 s under granian; why is not known yet). A full pass costs in proportion to
what is alive, so the rule keeps its cost per closed connection bounded, as the collector's own rule for its oldest generation does for objects.
Where the C library has no `malloc_trim` (musl, macOS) only the collection runs.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
import weakref
from typing import Callable

DELAY = 1.0  # seconds: closes within this share one trim
COLLECT_MIN = 100  # closed connections before a full collection, however few are open


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


_trim = _malloc_trim()


class _Due:
    """What is due on one loop: a trim, perhaps a collection first."""

    def __init__(self) -> None:
        self.closed = 0  # connections closed since the last full collection
        self.scheduled = False
        self.collect = False


_loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Due] = weakref.WeakKeyDictionary()


def release_after_close(still_open: int) -> None:
    """A connection closed and `still_open` others are open: return what it held, soon."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # no loop, nothing to schedule on (a unit test's bookkeeping)
        return
    due = _loops.setdefault(loop, _Due())
    due.closed += 1
    if due.closed >= max(COLLECT_MIN, still_open // 4):
        due.closed, due.collect = 0, True
    if not due.scheduled:
        due.scheduled = True
        loop.call_later(DELAY, _release, loop, due)


def _release(loop: asyncio.AbstractEventLoop, due: _Due) -> None:
    due.scheduled = False
    if not due.collect:
        return
    due.collect = False
    gc.collect()
    if _trim is not None:
        loop.run_in_executor(None, _trim, 0)
