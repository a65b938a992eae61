"""A child process that ends with the process that started it, even when that one is killed by
SIGKILL and can stop nothing itself: Linux's PR_SET_PDEATHSIG, set in the child between fork and
exec (`subprocess.Popen(..., preexec_fn=...)`). Where the C library has no `prctl` (not Linux)
nothing is set."""

from __future__ import annotations

import ctypes
import signal
from collections.abc import Callable

_PR_SET_PDEATHSIG = 1


def dies_with_parent(sig: int = signal.SIGTERM) -> Callable[[], None]:
    """A `preexec_fn`: the child gets `sig` when its parent dies (SIGTERM: it stops in order)."""

    def arrange() -> None:
        try:
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, sig)
        except (OSError, AttributeError):
            pass

    return arrange
