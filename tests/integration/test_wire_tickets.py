"""POST /v1/wire/tickets on the real app and a real database: who may mint, what a ticket
grants, and that the Wire can redeem it once, only on its transport, only before expiry."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import asyncpg
import msgspec
import pytest

from access.store import revoke_key
from domain.ids import is_id
from tests.integration.access_support import make_key, problem, serving
from wire.tickets import TICKET_SECONDS, redeem_ticket

GAME = "game:gm_8k3q2d7r1m4x9c6v5b0n"
MARKET = "market:mkt_2f7h3j9k1m5q8r4t6v0w"


@pytest.fixture
def app_settings(settings, redis_url):  # noqa: F811
    return msgspec.structs.replace(settings, redis_url=redis_url)


async def redeem(settings, ticket: str, transport: str, now: datetime | None = None):
    conn = await asyncpg.connect(settings.database_url)
    try:
        return await redeem_ticket(conn, settings.secret().encode(), ticket, transport, now)
    finally:
        await conn.close()


async def test_a_ticket_is_minted_once_and_redeemed_once_on_its_transport(app_settings):
    key = await make_key(app_settings, "acme", "free", {"wire:connect", "read:odds"})
    async with serving(app_settings) as served, served.client(key=key) as c:
        before = datetime.now(timezone.utc)
        r = await c.post("/v1/wire/tickets", json={"topics": [GAME, MARKET, GAME]})
        assert r.status_code == 201, r.text
        assert r.headers["cache-control"] == "no-store"
        assert r.headers["x-credits-last"] == "1"
        body = r.json()
        assert body["object"] == "wire_ticket"
        assert is_id("wire_ticket", body["ticket"])
        assert (body["transport"], body["mode"], body["topics"]) == ("ws", "live", [GAME, MARKET])
        assert body["url"] == "ws://svc.test/v1/wire"
        assert body["ticket"] not in body["url"]
        expires = datetime.fromisoformat(body["expires_at"].replace("Z", "+00:00"))
        assert timedelta(0) < expires - before <= timedelta(seconds=TICKET_SECONDS + 1)

    ticket = body["ticket"]
    assert await redeem(app_settings, ticket, "sse") is None  # a ticket works only on its transport
    grant = await redeem(app_settings, ticket, "ws")
    assert grant is not None
    assert (grant.plan, grant.mode, grant.transport, grant.topics) == ("free", "live", "ws", (GAME, MARKET))
    assert grant.account_id.startswith("acct_")
    assert await redeem(app_settings, ticket, "ws") is None  # single use

    conn = await asyncpg.connect(app_settings.database_url)
    try:  # only a keyed hash is kept
        stored = await conn.fetch("SELECT ticket_hash::text AS h, key_id FROM access.wire_tickets")
    finally:
        await conn.close()
    assert len(stored) == 1 and ticket not in stored[0]["h"] and stored[0]["key_id"].startswith("key_")


async def test_an_expired_ticket_or_a_revoked_key_redeems_nothing(app_settings):
    key = await make_key(app_settings, "acme", "pro", {"wire:connect", "read:odds"})
    async with serving(app_settings) as served, served.client(key=key) as c:
        first = (await c.post("/v1/wire/tickets", json={})).json()["ticket"]
        second = (await c.post("/v1/wire/tickets", json={})).json()["ticket"]
        third = (await c.post("/v1/wire/tickets", json={})).json()["ticket"]
    later = datetime.now(timezone.utc) + timedelta(seconds=TICKET_SECONDS + 1)
    assert await redeem(app_settings, first, "ws", now=later) is None
    assert await redeem(app_settings, "wtkt_" + "0" * 20, "ws") is None  # never minted
    assert await redeem(app_settings, "not-a-ticket", "ws") is None
    grant = await redeem(app_settings, second, "ws")
    assert grant is not None and grant.topics is None  # any topic the plan allows
    conn = await asyncpg.connect(app_settings.database_url)
    try:
        key_id = await conn.fetchval("SELECT key_id FROM access.wire_tickets LIMIT 1")
        assert await revoke_key(conn, key_id)
    finally:
        await conn.close()
    assert await redeem(app_settings, third, "ws") is None


async def test_sse_tickets_name_their_topics_and_the_url_names_a_single_one(app_settings):
    key = await make_key(app_settings, "acme", "free", {"wire:connect", "read:odds"})
    async with serving(app_settings) as served, served.client(key=key) as c:
        r = await c.post("/v1/wire/tickets", json={"transport": "sse", "topics": [MARKET]})
        assert r.status_code == 201, r.text
        assert r.json()["url"] == f"http://svc.test/v1/stream/{MARKET}"
        r = await c.post("/v1/wire/tickets", json={"transport": "sse", "topics": [MARKET, GAME]})
        assert r.json()["url"] == "http://svc.test/v1/stream/{topic}"
        for body in ({"transport": "sse"}, {"transport": "sse", "topics": None}, {"topics": []}):
            r = await c.post("/v1/wire/tickets", json=body)
            assert r.status_code == 400, body
            assert (problem(r)["code"], problem(r)["param"]) == ("invalid_request", "topics")


async def test_public_url_is_where_tickets_point(app_settings):
    settings = msgspec.structs.replace(app_settings, public_url="https://api.example.com/")
    key = await make_key(settings, "acme", "free", {"wire:connect", "read:odds"})
    async with serving(settings) as served, served.client(key=key) as c:
        assert (await c.post("/v1/wire/tickets", json={})).json()["url"] == "wss://api.example.com/v1/wire"


async def test_test_keys_mint_only_sandbox_tickets_and_live_keys_may_ask_for_the_sandbox(app_settings):
    test_key = await make_key(app_settings, "acme", "free", {"wire:connect"}, mode="test")
    live_key = await make_key(app_settings, "acme", "free", {"wire:connect", "read:odds"})
    async with serving(app_settings) as served:
        async with served.client(key=test_key) as c:
            r = await c.post("/v1/wire/tickets", json={"mode": "live"})
            assert r.status_code == 403
            assert (problem(r)["code"], problem(r)["param"]) == ("not_entitled", "mode")
            assert r.headers["x-credits-last"] == "0"  # a refused request costs nothing
            assert (await c.post("/v1/wire/tickets", json={})).json()["mode"] == "test"
            assert (await c.post("/v1/wire/tickets", json={"mode": "test"})).json()["mode"] == "test"
        async with served.client(key=live_key) as c:
            assert (await c.post("/v1/wire/tickets", json={"mode": "test"})).json()["mode"] == "test"
            assert (await c.post("/v1/wire/tickets", json={})).json()["mode"] == "live"


async def test_who_may_mint_and_every_refusal_names_its_param(app_settings):
    wire = await make_key(app_settings, "acme", "free", {"wire:connect", "read:odds"})
    reader = await make_key(app_settings, "acme", "free", {"read:odds"})
    async with serving(app_settings) as served:
        async with served.client() as c:  # key-less
            r = await c.post("/v1/wire/tickets", json={})
            assert r.status_code == 401
            assert (problem(r)["code"], problem(r)["param"]) == ("unauthenticated", "Authorization")
        async with served.client(key=reader) as c:
            r = await c.post("/v1/wire/tickets", json={})
            assert r.status_code == 403
            assert (problem(r)["code"], problem(r)["param"]) == ("insufficient_scope", "wire:connect")
        async with served.client(key=wire) as c:
            r = await c.get("/v1/wire/tickets")
            assert r.status_code == 405 and problem(r)["code"] == "method_not_allowed"
            assert "POST" in r.headers["allow"]
            bad = [
                ({"transport": "carrier-pigeon"}, 400, "invalid_request", "transport"),
                ({"mode": "sandbox"}, 400, "invalid_request", "mode"),
                ({"topics": "game:gm_1"}, 400, "invalid_request", "topics"),
                ({"colour": "red"}, 400, "invalid_request", "colour"),
                ({"topics": [GAME, "Game:gm_1"]}, 400, "invalid_request", "topics[1]"),
                ({"topics": ["game:" + "a" * 200]}, 400, "invalid_request", "topics[0]"),
                ({"topics": ["nocolon"]}, 400, "invalid_request", "topics[0]"),
                # free plan: 50 Wire topics
                ({"topics": [f"game:t{i}" for i in range(51)]}, 403, "too_many_topics", "topics"),
            ]
            for body, status, code, param in bad:
                r = await c.post("/v1/wire/tickets", json=body)
                assert r.status_code == status, (body, r.text)
                assert (problem(r)["code"], problem(r)["param"]) == (code, param), body
            # 50 distinct topics are allowed, and repeats count once
            topics = [f"game:t{i}" for i in range(50)]
            r = await c.post("/v1/wire/tickets", json={"topics": topics + topics[:5]})
            assert r.status_code == 201 and r.json()["topics"] == topics
            r = await c.post("/v1/wire/tickets", content=b"{not json", headers={"content-type": "application/json"})
            assert r.status_code == 400 and problem(r)["code"] == "invalid_request"
            r = await c.post("/v1/wire/tickets", content=b"x" * 2_000_001, headers={"content-type": "application/json"})
            assert r.status_code == 413 and problem(r)["code"] == "payload_too_large"
