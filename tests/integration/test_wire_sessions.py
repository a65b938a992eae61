"""Socket sessions in Postgres: resumable with the current token for 120 s after a drop, on any
process; a resume takes a session over; an earlier holder's late writes change nothing."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import asyncpg

from access.store import revoke_key
from infra.db import create_pool
from tests.integration.access_support import make_key
from wire.presence import Presence
from wire.sessions import SessionStore
from wire.tickets import TicketGrant

T0 = datetime(2026, 11, 23, 12, 0, tzinfo=timezone.utc)


async def grant_of(settings) -> TicketGrant:
    await make_key(settings, "acme", "free", {"wire:connect"})
    conn = await asyncpg.connect(settings.database_url)
    try:
        key_id, account_id = await conn.fetchrow("SELECT id, account_id FROM access.api_keys")
    finally:
        await conn.close()
    return TicketGrant(key_id, account_id, "free", "live", "ws", ("game:a",), T0 + timedelta(seconds=60))


async def test_resume_with_the_current_token_within_the_window(settings):
    pool = await create_pool(settings.database_url, min_size=1, max_size=2)
    try:
        store, other_process = SessionStore(pool, b"s"), SessionStore(pool, b"s")
        session = await store.open(await grant_of(settings), 86_400, now=T0)
        first = await store.new_token(session)
        session.topics = {"game:a"}
        await store.save(session)
        await store.detach(session, now=T0 + timedelta(seconds=10))
        assert await other_process.resume(session.session_id, "wrong", now=T0 + timedelta(seconds=11)) is None
        resumed = await other_process.resume(session.session_id, first, now=T0 + timedelta(seconds=11))
        assert resumed is not None and resumed.topics == {"game:a"} and resumed.grant.topics == ("game:a",)
        assert resumed.holder == session.holder + 1

        second = await other_process.new_token(resumed)
        await store.new_token(session)  # the earlier holder's late writes change nothing ...
        await store.detach(session, now=T0 + timedelta(seconds=12))  # ... nor does its late detach
        assert await store.resume(session.session_id, first, now=T0 + timedelta(seconds=13)) is None  # spent
        # the new holder drops; 121 s later the session is gone
        await other_process.detach(resumed, now=T0 + timedelta(seconds=20))
        assert await store.resume(session.session_id, second, now=T0 + timedelta(seconds=141)) is None
        again = await store.resume(session.session_id, second, now=T0 + timedelta(seconds=139))
        assert again is not None and again.holder == resumed.holder + 1
    finally:
        await pool.close()


async def test_a_session_ends_with_its_lifetime_or_its_key(settings):
    pool = await create_pool(settings.database_url, min_size=1, max_size=2)
    try:
        store = SessionStore(pool, b"s")
        grant = await grant_of(settings)
        short = await store.open(grant, 60, now=T0)
        token = await store.new_token(short)
        await store.detach(short, now=T0 + timedelta(seconds=50))
        assert await store.resume(short.session_id, token, now=T0 + timedelta(seconds=61)) is None  # lifetime over

        revoked = await store.open(grant, 86_400, now=T0)
        token = await store.new_token(revoked)
        await store.detach(revoked, now=T0)
        conn = await asyncpg.connect(settings.database_url)
        try:
            await revoke_key(conn, grant.key_id)
        finally:
            await conn.close()
        assert await store.resume(revoked.session_id, token, now=T0 + timedelta(seconds=1)) is None
    finally:
        await pool.close()


async def test_a_session_whose_process_died_is_kept_120_seconds_from_its_last_heartbeat(settings):
    """A killed process never detaches its sessions: they are resumable for 120 s after its last
    heartbeat (at most a second before it died), and not after."""
    pool = await create_pool(settings.database_url, min_size=1, max_size=2)
    process, other = Presence(settings.database_url), Presence(settings.database_url)
    try:
        assert await process.start(10) and await other.start(10)
        store = SessionStore(pool, b"s")
        session = await store.open(await grant_of(settings), 86_400, process.number, now=T0)
        token = await store.new_token(session)
        # while its process lives, a held session may be taken over at any time
        assert await store.resume(session.session_id, "wrong", other.number, now=T0 + timedelta(hours=1)) is None
        await process.aclose()  # killed: no detach was written
        conn = await asyncpg.connect(settings.database_url)
        try:  # its last heartbeat, as the clock of this test has it
            await conn.execute("UPDATE access.wire_processes SET seen_at = $2 WHERE id = $1", process.number, T0)
        finally:
            await conn.close()
        assert await store.resume(session.session_id, token, other.number, now=T0 + timedelta(seconds=121)) is None
        resumed = await store.resume(session.session_id, token, other.number, now=T0 + timedelta(seconds=119))
        assert resumed is not None and resumed.holder == session.holder + 1
        # now held by a live process: resumable with its new token however long it stays held
        token = await store.new_token(resumed)
        again = await store.resume(session.session_id, token, other.number, now=T0 + timedelta(seconds=600))
        assert again is not None
    finally:
        await process.aclose()
        await other.aclose()
        await pool.close()


async def test_a_stream_reopens_with_its_spent_ticket_within_the_window(settings):
    """A stream's session is named by the ticket that opened it (its URL's): a browser's
    EventSource reconnects with it. 120 s after the drop, or once the key is revoked, it is gone;
    a socket's resume cannot take a stream's session."""
    pool = await create_pool(settings.database_url, min_size=1, max_size=2)
    try:
        store = SessionStore(pool, b"s")
        grant = await grant_of(settings)
        session = await store.open(grant, 86_400, now=T0, stream_ticket="wtkt_aaaaaaaaaaaaaaaaaaaa")
        assert session.topics == {"game:a"}
        assert await store.stream_kind("wtkt_aaaaaaaaaaaaaaaaaaaa") == "key"
        assert await store.resume_stream("wtkt_bbbbbbbbbbbbbbbbbbbb", now=T0) is None
        await store.detach(session, now=T0 + timedelta(seconds=5))
        assert await store.resume_stream("wtkt_aaaaaaaaaaaaaaaaaaaa", now=T0 + timedelta(seconds=126)) is None
        again = await store.resume_stream("wtkt_aaaaaaaaaaaaaaaaaaaa", now=T0 + timedelta(seconds=124))
        assert again is not None and again.topics == {"game:a"} and again.grant.transport == "sse"
        token = await store.new_token(again)  # never handed out for a stream; a socket resume cannot use it
        assert await store.resume(session.session_id, token, now=T0 + timedelta(seconds=125)) is None
        await store.detach(again, now=T0 + timedelta(seconds=130))
        conn = await asyncpg.connect(settings.database_url)
        try:
            await revoke_key(conn, grant.key_id)
        finally:
            await conn.close()
        assert await store.resume_stream("wtkt_aaaaaaaaaaaaaaaaaaaa", now=T0 + timedelta(seconds=131)) is None
    finally:
        await pool.close()
