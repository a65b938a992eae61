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


async def keep(conn: asyncpg.Connection, answer_id: str, subject: str, body: bytes, expires_at: datetime,
               dataset: str | None = None, basis: bytes | None = None) -> None:
    """Kept without waiting for the disk (asynchronous commit): a kept answer is a convenience, and
    one lost to a crash in the next moment answers `not_found`; the answer itself was served.
    A live answer also keeps its `basis` and `dataset` (api.answers.live)."""
    # one statement, one round trip: set_config(..., true) lasts to the end of the statement's own
    # transaction, whose commit then does not wait for the disk
    await conn.execute(
        "WITH async AS (SELECT set_config('synchronous_commit', 'off', true)) "
        "INSERT INTO access.answers (answer_id, subject, body, expires_at, dataset, basis) "
        "SELECT $1, $2, $3, $4, $5, $6 FROM async ON CONFLICT (answer_id) DO NOTHING",
        answer_id, subject, body, expires_at, dataset, basis,
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


@dataclass(frozen=True)
class Topic:
    """An answer's Wire topic as it stands: its seq and newest version."""

    subject: str
    dataset: str | None
    basis: bytes | None
    version: int
    latest: bytes  # the newest version's JSON
    expires_at: datetime


_TOPIC = ("SELECT subject, dataset, basis, version, coalesce(latest, body) AS latest, expires_at FROM access.answers "
          "WHERE answer_id = $1 AND body IS NOT NULL AND expires_at >= now()")


def _topic(row) -> Topic | None:
    return None if row is None else Topic(row["subject"], row["dataset"], row["basis"] and bytes(row["basis"]),
                                          row["version"], bytes(row["latest"]), row["expires_at"])


async def topic(conn: asyncpg.Connection, answer_id: str, subject: str) -> Topic | None:
    """The answer's topic for its asker (anyone else, or an expired answer: None)."""
    return _topic(await conn.fetchrow(_TOPIC + " AND subject = $2", answer_id, subject))


async def lock_topic(conn: asyncpg.Connection, answer_id: str) -> Topic | None:
    """The topic, locked to the end of the transaction: one process at a time re-derives it."""
    return _topic(await conn.fetchrow(_TOPIC + " FOR UPDATE", answer_id))


async def supersede(conn: asyncpg.Connection, answer_id: str, version: int, new_id: str, body: bytes,
                    subject: str, expires_at: datetime) -> None:
    """Record a new version of the topic, and keep it under its own ID too (readable by GET)."""
    await conn.execute("UPDATE access.answers SET version = $2, latest = $3 WHERE answer_id = $1",
                       answer_id, version, body)
    await conn.execute("INSERT INTO access.answers (answer_id, subject, body, expires_at) VALUES ($1, $2, $3, $4) "
                       "ON CONFLICT (answer_id) DO NOTHING", new_id, subject, body, expires_at)
