"""Where the output of `svc up`'s children goes: `<data-dir>/logs/<child>.log`, rotated by size.

A child writes its stdout and stderr into a pipe; a thread of the supervisor copies it line by
line into a `logging.handlers.RotatingFileHandler`: when the next line would take the file past
`Settings.log_max_bytes`, `<child>.log` becomes `<child>.log.1`, the older files shift up
(`.1` to `.2`, ...) and the one past `Settings.log_backups` is deleted. So a child's logs never
take more than about (backups + 1) x max bytes, lines are never cut in two or lost to a
rotation (the child never holds the file itself), and a restarted child goes on in the same
file. A line longer than `LINE_MAX` bytes is written in pieces of that size.
"""

from __future__ import annotations

import logging
import logging.handlers
import threading
from pathlib import Path
from typing import IO

LINE_MAX = 64 * 1024  # bytes read at a time: a child that never writes a newline is still bounded


class ChildLog:
    """One child's log file, kept across its restarts; `attach` each new process's output."""

    def __init__(self, path: Path, max_bytes: int, backups: int) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        # max_bytes 0: never rotate (RotatingFileHandler's own convention)
        self._handler = logging.handlers.RotatingFileHandler(
            path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8", errors="backslashreplace",
        )
        self._handler.setFormatter(logging.Formatter("%(message)s"))
        self._threads: list[threading.Thread] = []

    def attach(self, stream: IO[bytes]) -> None:
        """Copy a process's output (its stdout pipe, stderr merged) into the log until it closes."""
        thread = threading.Thread(target=self._pump, args=(stream,), name=f"log:{self.path.name}", daemon=True)
        thread.start()
        self._threads = [t for t in self._threads if t.is_alive()] + [thread]

    def write(self, line: str) -> None:
        """One line of the supervisor's own about this child (it is not the child's output)."""
        self._handler.handle(logging.makeLogRecord({"msg": line, "levelno": logging.INFO}))

    def _pump(self, stream: IO[bytes]) -> None:
        try:
            while chunk := stream.readline(LINE_MAX):
                # output that is not UTF-8 (a locale's message) is kept as \xNN escapes
                self.write(chunk.decode("utf-8", "backslashreplace").rstrip("\r\n"))
        except (OSError, ValueError):  # the pipe was closed under us: the process is gone
            pass
        finally:
            stream.close()

    def drain(self, timeout: float = 2.0) -> None:
        """After the process exited: wait (bounded) until what it wrote last is in the file."""
        for thread in self._threads:
            thread.join(timeout)

    def close(self, timeout: float = 5.0) -> None:
        """After the process stopped: the rest of its output written, the file closed."""
        self.drain(timeout)
        self._handler.close()
