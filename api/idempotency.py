"""`Idempotency-Key` on POST calls that accept one (the strategy check): a retry with the same
key and the same request gets the first answer again (with `Idempotent-Replayed: true`); the
same key with another request is 422 `idempotency_key_reused`; a retry while the first is still
running is 409 `idempotency_in_progress` (retryable). Keys are per caller (account, or address
for anonymous calls) and kept for a day (`TTL`).

Only answers are kept: a request that ends in a problem forgets its key, so a retry runs again
(and, the check being deterministic, gets the same problem).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import timedelta

import asyncpg

from api.problems import ProblemError

HEADER = "Idempotency-Key"
TTL = timedelta(days=1)
_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")  # visible ASCII, 1 to 255 characters


@dataclass(frozen=True)
class Stored:
    status: int
    body: bytes


def check_key(raw: str | None) -> str | None:
    if raw is None:
        return None
    if not _KEY.match(raw):
        raise ProblemError("invalid_request", f"{HEADER} must be 1 to 255 visible ASCII characters.", param=HEADER)
    return raw


def fingerprint(*parts: bytes | str) -> str:
    h = hashlib.blake2b(digest_size=16)
    for p in parts:
        data = p.encode() if isinstance(p, str) else p
        h.update(len(data).to_bytes(8, "big") + data)
    return h.hexdigest()


async def begin(conn: asyncpg.Connection, subject: str, key: str, operation: str, digest: str) -> Stored | None:
    """Claim the key for this request (None: run it), or the first answer to replay; raises the
    problem when the key belongs to another request or its first request is still running."""
    await conn.execute("DELETE FROM access.idempotency_keys WHERE subject = $1 AND key = $2 AND created_at < now() - $3::interval",
                       subject, key, TTL)
    claimed = await conn.fetchval(
        "INSERT INTO access.idempotency_keys (subject, key, operation, fingerprint) VALUES ($1, $2, $3, $4) "
        "ON CONFLICT (subject, key) DO NOTHING RETURNING true", subject, key, operation, digest,
    )
    if claimed:
        return None
    row = await conn.fetchrow("SELECT operation, fingerprint, status, body FROM access.idempotency_keys "
                              "WHERE subject = $1 AND key = $2", subject, key)
    if row is None:  # forgotten between the two statements: claim it again
        return await begin(conn, subject, key, operation, digest)
    if (row["operation"], row["fingerprint"]) != (operation, digest):
        raise ProblemError("idempotency_key_reused", f"This {HEADER} was used for another request; use a new key.",
                           param=HEADER)
    if row["status"] is None:
        raise ProblemError("idempotency_in_progress", f"The first request with this {HEADER} is still running.",
                           param=HEADER, headers={"Retry-After": "1"})
    return Stored(row["status"], bytes(row["body"]))


async def finish(conn: asyncpg.Connection, subject: str, key: str, status: int, body: bytes) -> None:
    await conn.execute("UPDATE access.idempotency_keys SET status = $3, body = $4 WHERE subject = $1 AND key = $2",
                       subject, key, status, body)


async def forget(conn: asyncpg.Connection, subject: str, key: str) -> None:
    await conn.execute("DELETE FROM access.idempotency_keys WHERE subject = $1 AND key = $2 AND status IS NULL",
                       subject, key)
