"""Accounts and API keys in Postgres (schema `access`): create, list, revoke, look up."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

import asyncpg

from access.keys import digest_matches, key_digest, new_key, parse_key
from access.plans import ACCOUNT_PLANS, MODES, PLANS, scopes_refused
from domain.ids import random_id


class KeyRefused(ValueError):
    """A key that may not be created as asked (the message says why)."""


@dataclass(frozen=True)
class KeyRecord:
    key_id: str
    account_id: str
    account: str
    plan: str
    mode: str
    scopes: tuple[str, ...]
    billing_anchor_day: int
    created_at: datetime
    revoked_at: datetime | None


_SELECT = """
SELECT k.id AS key_id, k.account_id, a.name AS account, a.plan, k.mode, k.scopes,
       a.billing_anchor_day, k.created_at, k.revoked_at
FROM access.api_keys k JOIN access.accounts a ON a.id = k.account_id
"""


def _record(row: asyncpg.Record) -> KeyRecord:
    return KeyRecord(**{**dict(row), "scopes": tuple(sorted(row["scopes"]))})


async def create_key(
    conn: asyncpg.Connection, secret: bytes, *, account: str, plan: str, scopes: set[str], mode: str,
    now: datetime | None = None,
) -> tuple[str, KeyRecord]:
    """A new key for `account` (created on first use, on `plan`); returns the key, shown once."""
    if plan not in ACCOUNT_PLANS:
        raise KeyRefused(f"unknown plan {plan!r}; plans: {', '.join(ACCOUNT_PLANS)}")
    if mode not in MODES:
        raise KeyRefused(f"unknown mode {mode!r}; modes: live, test")
    if refused := scopes_refused(plan, scopes):
        allowed = ", ".join(sorted(PLANS[plan].scopes))
        raise KeyRefused(f"plan {plan} keys may not hold {', '.join(refused)} (allowed: {allowed})")
    account = account.strip()
    if not account:
        raise KeyRefused("an account name is required")
    now = now or datetime.now(timezone.utc)
    async with conn.transaction():
        await conn.execute(
            "INSERT INTO access.accounts (id, name, plan, billing_anchor_day, created_at) VALUES ($1, $2, $3, $4, $5) "
            "ON CONFLICT (name) DO NOTHING",
            random_id("account"), account, plan, now.day, now,
        )
        row = await conn.fetchrow("SELECT id, plan FROM access.accounts WHERE name = $1", account)
        if row["plan"] != plan:
            raise KeyRefused(f"account {account!r} is on plan {row['plan']}; all its keys share that plan")
        key, handle = new_key(mode)  # type: ignore[arg-type]
        key_id = random_id("key")
        await conn.execute(
            "INSERT INTO access.api_keys (id, handle, key_hash, account_id, mode, scopes, created_at) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7)",
            key_id, handle, key_digest(secret, key), row["id"], mode, sorted(scopes), now,
        )
        record = _record(await conn.fetchrow(_SELECT + "WHERE k.id = $1", key_id))
    return key, record


async def list_keys(conn: asyncpg.Connection, account: str | None = None) -> list[KeyRecord]:
    if account is None:
        rows = await conn.fetch(_SELECT + "ORDER BY a.name, k.created_at, k.id")
    else:
        rows = await conn.fetch(_SELECT + "WHERE a.name = $1 ORDER BY k.created_at, k.id", account)
    return [_record(r) for r in rows]


async def revoke_key(conn: asyncpg.Connection, key_id: str) -> KeyRecord | None:
    """Revoke a key (idempotent); None when there is no such key."""
    await conn.execute(
        "UPDATE access.api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL", key_id
    )
    row = await conn.fetchrow(_SELECT + "WHERE k.id = $1", key_id)
    return _record(row) if row else None


async def verify_key(conn: asyncpg.Connection, secret: bytes, key: str) -> KeyRecord | None:
    """The live record of a presented key; None for malformed, unknown, altered or revoked keys."""
    parsed = parse_key(key)
    if parsed is None:
        return None
    row = await conn.fetchrow(
        "SELECT k.key_hash, k.id AS key_id, k.account_id, a.name AS account, a.plan, k.mode, k.scopes, "
        "a.billing_anchor_day, k.created_at, k.revoked_at "
        "FROM access.api_keys k JOIN access.accounts a ON a.id = k.account_id WHERE k.handle = $1",
        parsed.handle,
    )
    if not digest_matches(secret, key, row["key_hash"] if row else None):
        return None
    record = _record({k: v for k, v in dict(row).items() if k != "key_hash"})  # type: ignore[arg-type]
    if record.revoked_at is not None or record.mode != parsed.mode:
        return None
    return record
