"""Finished answers kept for retrieval by their ID (table `access.answers`): the answer as
served, never its question. Kept `TTL` (a day); then the body is dropped and the ID answers
`answer_expired` for `FORGET_AFTER` (a week), then it is forgotten (`not_found`). Only the
caller that asked (the same key mode and account) can read an answer back."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

import asyncpg

TTL = timedelta(days=1)
FORGET_AFTER = timedelta(days=7)
# each write also tidies expired rows once in this many writes (a cheap indexed statement)
TIDY_EVERY = 50


@dataclass(frozen=True)
class Kept:
    body: bytes | None  # None: expired
    expires_at: datetime


async def keep(conn: asyncpg.Connection, answer_id: str, subject: str, body: bytes, expires_at: datetime) -> None:
    """Kept without waiting for the disk (asynchronous commit): a kept answer is a convenience, and
    one lost to a crash in the next moment answers `not_found`; the answer itself was served."""
    # one statement, one round trip: set_config(..., true) lasts to the end of the statement's own
    # transaction, whose commit then does not wait for the disk
    await conn.execute(
        "WITH async AS (SELECT set_config('synchronous_commit', 'off', true)) "
        "INSERT INTO access.answers (answer_id, subject, body, expires_at) SELECT $1, $2, $3, $4 FROM async "
        "ON CONFLICT (answer_id) DO NOTHING",
        answer_id, subject, body, expires_at,
    )
    if random.randrange(TIDY_EVERY) == 0:
        await tidy(conn)


async def tidy(conn: asyncpg.Connection) -> None:
    await conn.execute("UPDATE access.answers SET body = NULL WHERE expires_at < now() AND body IS NOT NULL")
    await conn.execute("DELETE FROM access.answers WHERE expires_at < now() - $1::interval", FORGET_AFTER)


async def read(conn: asyncpg.Connection, answer_id: str, subject: str) -> Kept | None:
    """The kept answer (body None once expired), or None: unknown, forgotten, or someone else's."""
    row = await conn.fetchrow(
        "SELECT body, expires_at, expires_at < now() AS expired FROM access.answers "
        "WHERE answer_id = $1 AND subject = $2 AND expires_at >= now() - $3::interval",
        answer_id, subject, FORGET_AFTER,
    )
    if row is None:
        return None
    return Kept(None if row["expired"] or row["body"] is None else bytes(row["body"]), row["expires_at"])
