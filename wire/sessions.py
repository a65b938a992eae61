"""Socket sessions for resume (resume within 120 seconds with the session ID, its
resume token and the last seq per topic), in Postgres so a resume may reach any API process.

A session is held by one connection at a time; it is kept 120 seconds after its connection
drops, and never past the connection lifetime. A connection whose process died (killed: no
detach was written) dropped at that process's last heartbeat (`wire.presence`), at most a
second before it died, so its session is kept 120 seconds from then. A resume with the current token takes the
session over even before the old connection's drop was noticed (`holder` counts the takeovers,
so a late detach by an earlier connection changes nothing). Every hello carries a new resume token; only
its keyed hash is stored and the previous one stops working.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone

import asyncpg

from access.keys import key_digest as token_digest  # the keyed hash keys and tickets use
from domain.ids import random_id
from wire.presence import alive
from wire.tickets import TicketGrant, standing_scopes

RESUME_SECONDS = 120


def _resumable(since: str) -> str:
    """SQL: session `s` dropped no earlier than `since` (a parameter): detached since, or held by a
    connection whose process is alive, or whose process's last heartbeat is since (it died then).
    Sessions from before processes were recorded (no process) count as held."""
    return (f"s.detached_at >= {since} OR (s.detached_at IS NULL AND (s.process IS NULL OR {alive('s.process')} "
            f"OR (SELECT p.seen_at FROM access.wire_processes p WHERE p.id = s.process) >= {since}))")


_COLUMNS = ("s.id, s.key_id, s.account_id, a.plan, s.mode, s.ticket_topics, s.topics, s.expires_at, s.holder, "
            "k.scopes, s.kind")


@dataclass
class Session:
    session_id: str
    grant: TicketGrant
    expires_at: datetime  # the connection lifetime
    topics: set[str] = field(default_factory=set)
    holder: int = 1


def _session(row: asyncpg.Record) -> Session:
    ticket_topics = row["ticket_topics"]
    grant = TicketGrant(row["key_id"], row["account_id"], row["plan"], row["mode"], "ws",
                        None if ticket_topics is None else tuple(ticket_topics), row["expires_at"],
                        standing_scopes(row["scopes"], row["plan"]), row["kind"])
    return Session(row["id"], grant, row["expires_at"], set(row["topics"]), row["holder"])


class SessionStore:
    def __init__(self, pool: asyncpg.Pool, secret: bytes, resume_seconds: int = RESUME_SECONDS) -> None:
        self._pool = pool
        self._secret = secret
        self._resume = timedelta(seconds=resume_seconds)

    async def open(self, grant: TicketGrant, lifetime_seconds: int, process: int | None = None,
                   now: datetime | None = None, stream_ticket: str | None = None) -> Session:
        """A new session for a connection of this process. A stream's session (`stream_ticket`: the
        ticket that opened it, for one topic) is resumed with that ticket (`resume_stream`)."""
        now = now or datetime.now(timezone.utc)
        session = Session(random_id("wire_session"), grant, now + timedelta(seconds=lifetime_seconds))
        if stream_ticket is not None:
            session.topics = set(grant.topics or ())
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute(
                f"DELETE FROM access.wire_sessions s WHERE s.expires_at < $1 OR NOT ({_resumable('$2')})", now,
                now - self._resume,
            )
            await conn.execute(
                "INSERT INTO access.wire_sessions (id, key_id, account_id, plan, mode, ticket_topics, expires_at, "
                "process, kind, stream_ticket, topics) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                session.session_id, grant.key_id, grant.account_id, grant.plan, grant.mode,
                None if grant.topics is None else list(grant.topics), session.expires_at, process, grant.kind,
                None if stream_ticket is None else token_digest(self._secret, stream_ticket), sorted(session.topics),
            )
        return session

    async def new_token(self, session: Session) -> str:
        token = secrets.token_urlsafe(24)
        async with self._pool.acquire() as conn:
            await conn.execute("UPDATE access.wire_sessions SET token_hash = $2 WHERE id = $1 AND holder = $3",
                               session.session_id, token_digest(self._secret, token), session.holder)
        return token

    async def save(self, session: Session) -> None:
        """The session's topics and grant (an in-band `auth` may have refreshed it)."""
        g = session.grant
        async with self._pool.acquire() as conn:
            await conn.execute(
                "UPDATE access.wire_sessions SET topics = $2, key_id = $3, ticket_topics = $4 WHERE id = $1 AND holder = $5",
                session.session_id, sorted(session.topics), g.key_id, None if g.topics is None else list(g.topics),
                session.holder,
            )

    async def detach(self, session: Session, now: datetime | None = None) -> None:
        async with self._pool.acquire() as conn:
            await conn.execute("UPDATE access.wire_sessions SET detached_at = $2 WHERE id = $1 AND holder = $3",
                               session.session_id, now or datetime.now(timezone.utc), session.holder)

    async def resume_stream(self, ticket: str, process: int | None = None,
                            now: datetime | None = None) -> Session | None:
        """The session of the stream this (spent) ticket opened, now held by the caller: a browser's
        EventSource reconnects with the same URL. None when there is none, or it is expired,
        dropped over 120 s ago, or its key revoked."""
        now = now or datetime.now(timezone.utc)
        async with self._pool.acquire() as conn:
            row = await conn.fetchrow(
                f"UPDATE access.wire_sessions s SET detached_at = NULL, holder = s.holder + 1, process = $4 "
                f"FROM access.api_keys k JOIN access.accounts a ON a.id = k.account_id "
                f"WHERE s.stream_ticket = $1 AND ({_resumable('$2')}) "
                f"AND s.expires_at > $3 AND k.id = s.key_id AND k.revoked_at IS NULL RETURNING {_COLUMNS}",
                token_digest(self._secret, ticket), now - self._resume, now, process,
            )
        if row is None:
            return None
        session = _session(row)
        session.grant = replace(session.grant, transport="sse")
        return session

    async def stream_kind(self, ticket: str) -> str | None:
        """The kind of ticket that opened the stream this ticket names; None: no such stream."""
        async with self._pool.acquire() as conn:
            return await conn.fetchval("SELECT kind FROM access.wire_sessions WHERE stream_ticket = $1",
                                       token_digest(self._secret, ticket))

    async def kind_of(self, session_id: str) -> str | None:
        """The kind of ticket a session was opened with (which origins may resume it); None: no such session."""
        async with self._pool.acquire() as conn:
            return await conn.fetchval("SELECT kind FROM access.wire_sessions WHERE id = $1", session_id)

    async def resume(self, session_id: str, token: str, process: int | None = None,
                     now: datetime | None = None) -> Session | None:
        """The session for this ID and current token, now held by the caller; None when unknown,
        expired, dropped over 120 s ago (detached, or its process dead since), its key revoked, or
        the token is not the current one.
        Its grant carries the key's scopes and its account's plan as they stand now."""
        now = now or datetime.now(timezone.utc)
        async with self._pool.acquire() as conn:
            row = await conn.fetchrow(
                f"UPDATE access.wire_sessions s SET detached_at = NULL, holder = s.holder + 1, process = $5 "
                f"FROM access.api_keys k JOIN access.accounts a ON a.id = k.account_id "
                f"WHERE s.id = $1 AND s.token_hash = $2 AND s.stream_ticket IS NULL AND ({_resumable('$3')}) "
                f"AND s.expires_at > $4 AND k.id = s.key_id AND k.revoked_at IS NULL RETURNING {_COLUMNS}",
                session_id, token_digest(self._secret, token), now - self._resume, now, process,
            )
        return None if row is None else _session(row)
