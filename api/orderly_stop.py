"""An orderly stop for live connections when the server process is told to stop.

granian's worker stops serving on SIGINT/SIGTERM and only then runs the lifespan shutdown, so
open Wire sockets and streams would be cut without a close frame. The app instead takes the
worker loop's handlers for those signals: on the first, it tells its live connections to close
(sockets with 4201, reconnect now and resume; streams with a `drain`), waits for them at most a
few seconds, then hands the signal to granian's own handler. Further signals while stopping
change nothing: Ctrl-C reaches the worker and granian's main process together, and the main
process then sends the worker SIGTERM at once; the grace period bounds the wait either way.
h2corn, served in one process (infra/h2corn_serve.py), stops when the loop's handler calls its
`Server.shutdown`, taken and handed over alike (under its own supervisor, with several workers,
the supervisor stops a worker's Rust side through a pipe, and sockets are closed 1001 first).
uvicorn stops the same way (it closes sockets with 1012 and runs the lifespan shutdown after
they are gone) but keeps its handlers with `signal.signal`, not on the loop: those are taken
and handed over alike. Under a server that installs neither (tests' in-process clients: the
interpreter's defaults) nothing changes.
"""

from __future__ import annotations

import asyncio
import functools
import signal
import threading
from typing import Awaitable, Callable

import structlog

log = structlog.get_logger("api.stop")
SIGNALS = (signal.SIGINT, signal.SIGTERM)


def take_stop_signals(loop: asyncio.AbstractEventLoop, before_stop: Callable[[], Awaitable[None]],
                      grace: float) -> bool:
    """Run `before_stop` (at most `grace` seconds) before the server's own stop handlers; False
    when there are none to hand over to."""
    # asyncio keeps a loop's signal handlers here; there is no public way to read them
    handlers = getattr(loop, "_signal_handlers", None)
    on_loop = {sig: handlers.get(sig) for sig in SIGNALS} if isinstance(handlers, dict) else {}
    if on_loop and all(on_loop.values()):
        hand_over = {sig: on_loop[sig]._run for sig in SIGNALS}
        take = _take_on_loop
    else:
        plain = {sig: signal.getsignal(sig) for sig in SIGNALS}
        # the interpreter's defaults are no server's; uvloop's own dispatcher runs the loop's
        # handlers, which it does not show (granian on uvloop): neither can be handed over
        if threading.current_thread() is not threading.main_thread() or not all(
                callable(h) and h is not signal.default_int_handler and getattr(h, "__self__", None) is not loop
                for h in plain.values()):
            return False
        hand_over = {sig: functools.partial(plain[sig], sig, None) for sig in SIGNALS}
        take = _take_plain
    stopping: list[asyncio.Task] = []

    async def stop_in_order(sig: int) -> None:
        try:
            await asyncio.wait_for(before_stop(), grace)
        except asyncio.TimeoutError:
            log.warning("live connections still open after the grace period; stopping anyway", seconds=grace)
        except Exception:
            log.exception("closing live connections failed; stopping anyway")
        hand_over[sig]()

    def on_signal(sig: int) -> None:
        if stopping:  # already stopping, within the grace period
            return
        log.info("stopping: closing live connections first", signal=signal.Signals(sig).name)
        stopping.append(loop.create_task(stop_in_order(sig)))

    take(loop, on_signal)
    return True


def _take_on_loop(loop: asyncio.AbstractEventLoop, on_signal: Callable[[int], None]) -> None:
    for sig in SIGNALS:
        loop.add_signal_handler(sig, on_signal, sig)


def _take_plain(loop: asyncio.AbstractEventLoop, on_signal: Callable[[int], None]) -> None:
    # a `signal.signal` handler runs between two bytecodes of the main thread, perhaps inside the
    # loop's own code: it only schedules the stop, threadsafe so that a waiting loop wakes
    for sig in SIGNALS:
        signal.signal(sig, lambda sig, frame: loop.call_soon_threadsafe(on_signal, sig))
