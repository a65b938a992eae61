"""Socket sessions kept for resume (spec 6.1: resume within 120 seconds with the session ID,
its resume token and the last seq per topic). Pure: the caller passes time.

A session lives in the process that served it: a resume that reaches another process finds
nothing and is answered with `resume_failed` and close 4011, after which the client starts
over with a new ticket.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field
from typing import Any

from schemas.ids import random_id

RESUME_SECONDS = 120


@dataclass
class Session:
    session_id: str
    grant: Any  # the TicketGrant that opened it
    expires_at: float  # the connection lifetime, monotonic
    topics: set[str] = field(default_factory=set)
    token: str = ""
    detached_at: float | None = None  # None while a connection holds it


class Sessions:
    def __init__(self, resume_seconds: float = RESUME_SECONDS) -> None:
        self._resume_seconds = resume_seconds
        self._by_id: dict[str, Session] = {}

    def open(self, grant: Any, expires_at: float, now: float) -> Session:
        self._sweep(now)
        session = Session(random_id("wire_session"), grant, expires_at)
        self._by_id[session.session_id] = session
        return session

    @staticmethod
    def new_token(session: Session) -> str:
        """A fresh resume token (every hello carries a new one; the old one stops working)."""
        session.token = secrets.token_urlsafe(24)
        return session.token

    def detach(self, session: Session, now: float) -> None:
        session.detached_at = now

    def resume(self, session_id: str, token: str, now: float) -> Session | None:
        """The detached session for this ID and token, now attached again; None when unknown,
        expired, still attached elsewhere, or the token is wrong."""
        self._sweep(now)
        session = self._by_id.get(session_id)
        if session is None or session.detached_at is None or not session.token:
            return None
        if not hmac.compare_digest(session.token.encode(), token.encode()):
            return None
        session.detached_at = None
        return session

    def _sweep(self, now: float) -> None:
        gone = [
            sid for sid, s in self._by_id.items()
            if now >= s.expires_at or (s.detached_at is not None and now - s.detached_at > self._resume_seconds)
        ]
        for sid in gone:
            del self._by_id[sid]

    def __len__(self) -> int:
        return len(self._by_id)
