"""An orderly stop for live connections when the server process is told to stop.

granian's worker stops serving on SIGINT/SIGTERM and only then runs the lifespan shutdown, so
open Wire sockets and streams would be cut without a close frame. The app instead takes the
worker loop's handlers for those signals: on the first, it tells its live connections to close
(sockets with 4201, reconnect now and resume; streams with a `drain`), waits for them at most a
few seconds, then hands the signal to granian's own handler. Further signals while stopping
change nothing: Ctrl-C reaches the worker and granian's main process together, and the main
process then sends the worker SIGTERM at once; the grace period bounds the wait either way.
Under a server that installs no loop handlers (tests' in-process clients) nothing changes.
"""

from __future__ import annotations

import asyncio
import signal
from typing import Awaitable, Callable

import structlog

log = structlog.get_logger("api.stop")
SIGNALS = (signal.SIGINT, signal.SIGTERM)


def take_stop_signals(loop: asyncio.AbstractEventLoop, before_stop: Callable[[], Awaitable[None]],
                      grace: float) -> bool:
    """Run `before_stop` (at most `grace` seconds) before the server's own stop handlers; False
    when the loop has none to hand over to."""
    # asyncio keeps a loop's signal handlers here; there is no public way to read them
    handlers = getattr(loop, "_signal_handlers", None)
    if not isinstance(handlers, dict):
        return False
    previous = {sig: handlers.get(sig) for sig in SIGNALS}
    if not all(previous.values()):
        return False
    stopping: list[asyncio.Task] = []

    async def stop_in_order(sig: int) -> None:
        try:
            await asyncio.wait_for(before_stop(), grace)
        except asyncio.TimeoutError:
            log.warning("live connections still open after the grace period; stopping anyway", seconds=grace)
        except Exception:
            log.exception("closing live connections failed; stopping anyway")
        previous[sig]._run()

    def on_signal(sig: int) -> None:
        if stopping:  # already stopping, within the grace period
            return
        log.info("stopping: closing live connections first", signal=signal.Signals(sig).name)
        stopping.append(loop.create_task(stop_in_order(sig)))

    for sig in SIGNALS:
        loop.add_signal_handler(sig, on_signal, sig)
    return True
