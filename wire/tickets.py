"""Wire tickets in Postgres: minted by a key, redeemed once by the Wire.

A ticket is `wtkt_` + 20 random characters (100 bits). Only HMAC-SHA256(server secret, ticket)
is stored (the keyed hash API keys use). Redeeming is one UPDATE that succeeds at most once, only before expiry and only on
the ticket's transport, so two sockets racing with one ticket cannot both get in.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import asyncpg

from access.keys import key_digest as ticket_digest  # the same keyed hash as API keys
from access.plans import PLANS
from access.store import create_key
from domain.ids import is_id, random_id

TICKET_SECONDS = 60  # a ticket lives at most 60 seconds
# expired tickets are kept this long (a redeem after expiry can then be told apart in logs)
KEEP_EXPIRED = timedelta(hours=1)


@dataclass(frozen=True)
class TicketGrant:
    """What a ticket lets its bearer do on the Wire."""

    key_id: str
    account_id: str
    plan: str
    mode: str
    transport: str
    topics: tuple[str, ...] | None  # None: any topic the plan allows
    expires_at: datetime
    # what the key may read now: its scopes that its account's plan allows (read when redeemed or
    # resumed, so a key's standing is never older than its connection's last (re)start)
    scopes: frozenset[str] = frozenset()
    kind: str = "key"  # the credential that minted it (`wire.origins`): which browser origins may use it


async def mint_ticket(
    conn: asyncpg.Connection, secret: bytes, *, key_id: str, account_id: str, plan: str, mode: str,
    transport: str, topics: list[str] | None, kind: str = "key", now: datetime | None = None,
) -> tuple[str, TicketGrant]:
    """A new ticket (shown once) and what it grants."""
    now = now or datetime.now(timezone.utc)
    ticket = random_id("wire_ticket")
    grant = TicketGrant(key_id, account_id, plan, mode, transport,
                        None if topics is None else tuple(topics), now + timedelta(seconds=TICKET_SECONDS),
                        kind=kind)
    async with conn.transaction():
        await conn.execute("DELETE FROM access.wire_tickets WHERE expires_at < $1", now - KEEP_EXPIRED)
        await conn.execute(
            """INSERT INTO access.wire_tickets
               (ticket_hash, key_id, account_id, plan, mode, transport, topics, created_at, expires_at, kind)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)""",
            ticket_digest(secret, ticket), key_id, account_id, plan, mode, transport, topics, now, grant.expires_at,
            kind,
        )
    return ticket, grant


def standing_scopes(key_scopes, plan: str) -> frozenset[str]:
    """A key's scopes that its account's plan allows now (a plan may have changed since)."""
    return frozenset(key_scopes) & PLANS[plan].scopes if plan in PLANS else frozenset()


async def key_standing(conn: asyncpg.Connection, key_id: str) -> frozenset[str] | None:
    """What a key may do now: its scopes that its account's plan allows; None when it is revoked
    or gone (its Wire connections then close)."""
    row = await conn.fetchrow(
        "SELECT k.scopes, a.plan FROM access.api_keys k JOIN access.accounts a ON a.id = k.account_id "
        "WHERE k.id = $1 AND k.revoked_at IS NULL", key_id,
    )
    return None if row is None else standing_scopes(row["scopes"], row["plan"])


async def ticket_kind(conn: asyncpg.Connection, secret: bytes, ticket: str) -> str | None:
    """The kind of an unused ticket, without using it (a socket's upgrade checks its origin by
    it); None when there is no such ticket."""
    if not is_id("wire_ticket", ticket):
        return None
    return await conn.fetchval("SELECT kind FROM access.wire_tickets WHERE ticket_hash = $1 AND redeemed_at IS NULL",
                               ticket_digest(secret, ticket))


async def redeem_ticket(
    conn: asyncpg.Connection, secret: bytes, ticket: str, transport: str, now: datetime | None = None,
) -> TicketGrant | None:
    """The grant of a valid, unexpired, unused ticket for this transport whose key is not revoked,
    now used; else None. The grant's scopes are the key's as they stand now (the caller checks
    `wire:connect` and each topic's scope)."""
    if not is_id("wire_ticket", ticket):
        return None
    now = now or datetime.now(timezone.utc)
    row = await conn.fetchrow(
        """UPDATE access.wire_tickets t SET redeemed_at = $2
           FROM access.api_keys k JOIN access.accounts a ON a.id = k.account_id
           WHERE t.ticket_hash = $1 AND t.redeemed_at IS NULL AND t.expires_at > $2 AND t.transport = $3
             AND k.id = t.key_id AND k.revoked_at IS NULL
           RETURNING t.key_id, t.account_id, t.plan, t.mode, t.transport, t.topics, t.expires_at, t.kind,
                     k.scopes, a.plan AS account_plan""",
        ticket_digest(secret, ticket), now, transport,
    )
    if row is None:
        return None
    topics = row["topics"]
    return TicketGrant(row["key_id"], row["account_id"], row["account_plan"], row["mode"], row["transport"],
                       None if topics is None else tuple(topics), row["expires_at"],
                       standing_scopes(row["scopes"], row["account_plan"]), row["kind"])


# The first-party site (api/routes/site.py) mints `session` tickets for its page's visitors. A
# ticket stands on a key row (redeeming and resuming read its scopes, and revoking it ends its
# connections), so the site has an account of its own with one key nobody holds: made here the
# first time, its secret never kept. `svc keys revoke` on it switches the site's live updates
# off; a new key of the account (`svc keys create --account "first-party site" --plan scale
# --scopes read:odds,wire:connect`) switches them back on.
SITE_ACCOUNT = "first-party site"
SITE_PLAN = "scale"  # its Wire topic limit bounds one page's topics; connections count per visitor
SITE_SCOPES = frozenset({"read:odds", "wire:connect"})  # game and market topics, nothing else


async def site_key(conn: asyncpg.Connection, secret: bytes) -> tuple[str, str] | None:
    """(key ID, plan) of the key behind the site's session tickets: its account's newest unrevoked
    key, made with the account the first time; None when the account's keys are all revoked."""
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext('svc first-party site key'))")
        row = await conn.fetchrow(
            "SELECT k.id, a.plan FROM access.api_keys k JOIN access.accounts a ON a.id = k.account_id "
            "WHERE a.name = $1 AND k.revoked_at IS NULL ORDER BY k.created_at DESC, k.id LIMIT 1", SITE_ACCOUNT,
        )
        if row is not None:
            return row["id"], row["plan"]
        if await conn.fetchval("SELECT 1 FROM access.accounts WHERE name = $1", SITE_ACCOUNT):
            return None  # switched off by revoking: never re-made behind the operator's back
        _, record = await create_key(conn, secret, account=SITE_ACCOUNT, plan=SITE_PLAN, scopes=set(SITE_SCOPES),
                                     mode="live")
        return record.key_id, record.plan
