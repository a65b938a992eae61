"""Server-sent events framing (HTML Living Standard, 9.2). Pure."""

from __future__ import annotations

import re

_LAST_EVENT_ID = re.compile(r"^\s*(\d{1,18})\s*$")


def event(data: bytes, *, name: str | None = None, event_id: int | None = None) -> bytes:
    """One event. `data` is one JSON document (no raw newlines: JSON escapes them)."""
    head = b""
    if name is not None:
        head += b"event: " + name.encode() + b"\n"
    if event_id is not None:
        head += b"id: " + str(event_id).encode() + b"\n"
    return head + b"data: " + data.replace(b"\n", b"\ndata: ") + b"\n\n"


def comment(text: str) -> bytes:
    """A comment line: ignored by clients, keeps proxies and the connection awake."""
    return b": " + text.replace("\n", " ").encode() + b"\n\n"


def last_event_id(value: str | None) -> int | None:
    """The seq a resuming client saw last, from `Last-Event-ID`; None when absent or not a seq."""
    if value is None:
        return None
    match = _LAST_EVENT_ID.match(value)
    return int(match.group(1)) if match else None
