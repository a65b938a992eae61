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

Open connections, in a server process (`keep_frozen`): what an open socket holds lives as long
as the socket, ~150 tracked objects each (coroutines, tasks, closure cells of the ASGI layers),
and every full pass of the collector walks them all and frees none of them: with 2,000 sockets
one held the loop 897 ms (docs/benchmarks.md). So within `DELAY` of an open (once per `DELAY`
however many opened): a young collection (generations 0 and 1, so that young garbage is not
kept), then `gc.freeze()`, which moves every tracked object out of the collector's generations
(a list splice, no walk). Freezing only after a quarter of the open had opened left up to a
quarter of them to the full passes (two of 0.3 s in a run, against six of up to 1.2 s). What
the frozen sockets leave behind when they close is freed by their reference counts; their
reference cycles wait for the full collection above, which first gives every frozen object back
to the collector (`gc.unfreeze()`) and freezes what survives it again. Frozen garbage is so
bounded by the same rule as the rest: a quarter of what is open.

What requests leave behind while nothing opens (`REFREEZE_SECONDS`): during play every kept
response, resource and box score built after a change, and the Wire's recent deltas, outlive two
young passes and reach the oldest generation, whose full pass then walks all of them again and
again while they live (3-6 passes in an 8 s read mix with 500 sockets listening, up to tens of ms
each, every request in flight waiting). So after each full pass the collector runs on its own,
what survived it (alive, not garbage: it was just walked) is frozen as well, after a young
pass so that young garbage is freed first; the next full pass walks only what came of age
since. A frozen object that later becomes part of a garbage cycle is freed by the full
collection above, as a closed socket's is; and where few connections close (a REST-only
process), by `FROZEN_GROWTH`: once what `_refreeze` froze since the last collection that saw
everything is that share of what was frozen then, it runs one (unfreeze, full pass, freeze
again). What sockets hold is not counted: their garbage is the close rule's, and counting it
would walk everything again and again while thousands of sockets open. Without
it, a kept response or a request's task caught in a reference cycle after it was frozen would be
kept for the life of the process; with it, frozen garbage stays under that share of what lives,
and the walks it costs grow geometrically apart, as the collector's own rule for its oldest
generation does.

Every freeze is followed by a full pass over the then empty generations (`_freeze`: nothing to
walk), because the collector runs its next full pass only once a quarter as many objects as
its last full pass left in the oldest generation have come of age since: after the start-up
collection that was everything start-up made, so the first pass of its own came only after as
many had accumulated, and walked them all at once (284 ms in a played mix, once per run). Counted
from an empty oldest generation, full passes come often and each walks little.

Young passes (`YOUNG_THRESHOLD`): a server process makes and drops objects by the tens of
thousands a second (each request's scope, tasks, messages, rows; each delta's per-socket
bookkeeping), nearly all freed by their reference counts, and a young pass walks what is alive
when it runs (the requests in flight) whatever it frees. At the interpreter's 700 allocations
a pass, a played mix with 500 sockets ran 60 young and 6 middle passes in 8 s (0.5 s of wall
time in all on a loaded box); ten times fewer passes walk about as much each.
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
YOUNG_THRESHOLD = 7000  # net allocations of tracked objects between young passes (the interpreter's: 700)
REFREEZE_SECONDS = 1.0  # how soon what survived a full pass of the collector's own is frozen
FROZEN_GROWTH = 0.25  # growth of the frozen set that makes a collection see everything again


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
        self.frozen = False  # this loop's server keeps its long-lived objects frozen (keep_frozen)
        self.freeze = False  # connections opened since the last freeze
        self.full_passes = 0  # the collector's full passes as of the last freeze
        self.frozen_seen = 0  # frozen objects after the last collection that saw everything
        self.refrozen = 0  # frozen since then by `_refreeze` (sockets' own: the close rule's)


_loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Due] = weakref.WeakKeyDictionary()


def keep_frozen() -> None:
    """This loop serves connections for the life of its process: freeze what start-up made now,
    and from now on what opened connections hold (`settle_after_open`)."""
    loop = asyncio.get_running_loop()
    due = _loops.setdefault(loop, _Due())
    due.frozen = True
    gc.set_threshold(YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    gc.collect()
    _freeze(due)
    due.frozen_seen = gc.get_freeze_count()
    loop.call_later(REFREEZE_SECONDS, _refreeze, loop, due)


def _freeze(due: _Due) -> None:
    gc.freeze()
    gc.collect()  # over empty generations: the oldest counted empty from now (see the module's doc)
    due.full_passes = _full_passes()


def _full_passes() -> int:
    return gc.get_stats()[2]["collections"]


def _refreeze(loop: asyncio.AbstractEventLoop, due: _Due) -> None:
    """After a full pass of the collector's own: freeze what survived it (see the module's doc)."""
    if _loops.get(loop) is not due:  # no longer this loop's (a test's bookkeeping replaced)
        return
    if due.refrozen > due.frozen_seen * FROZEN_GROWTH:
        _collect_all(due)  # frozen garbage is bounded (see the module's doc)
    elif _full_passes() != due.full_passes:
        gc.collect(1)  # young garbage is freed, not frozen
        before = gc.get_freeze_count()
        _freeze(due)
        due.refrozen += max(0, gc.get_freeze_count() - before)
    loop.call_later(REFREEZE_SECONDS, _refreeze, loop, due)


def _collect_all(due: _Due) -> None:
    """A full pass that sees the frozen objects too (cycles among them are garbage like any
    other), then what survives it frozen again."""
    gc.unfreeze()
    gc.collect()
    _freeze(due)
    due.frozen_seen, due.refrozen = gc.get_freeze_count(), 0


def settle_after_open() -> None:
    """A connection opened: soon, take what it holds out of the collector's way (only where
    `keep_frozen` was called)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    due = _loops.get(loop)
    if due is None or not due.frozen:
        return
    due.freeze = True
    _schedule(loop, due)


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
    _schedule(loop, due)


def _schedule(loop: asyncio.AbstractEventLoop, due: _Due) -> None:
    if not due.scheduled:
        due.scheduled = True
        loop.call_later(DELAY, _release, loop, due)


def _release(loop: asyncio.AbstractEventLoop, due: _Due) -> None:
    due.scheduled = False
    if due.collect:
        due.collect = due.freeze = False
        if due.frozen:  # closed sockets' cycles may be frozen: the full pass must see them
            _collect_all(due)
        else:
            gc.collect()
        if _trim is not None:
            loop.run_in_executor(None, _trim, 0)
    elif due.freeze:
        due.freeze = False
        gc.collect(1)  # young garbage is freed, not frozen
        _freeze(due)
