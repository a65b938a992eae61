"""Browser origins on the Wire socket, end to end: checked before the upgrade (HTTP
403, the ticket unused), per kind of ticket (API key, first-party session, card tool), an empty
list allows no browser, and clients that send no `Origin` (not browsers) pass."""

from __future__ import annotations

import json

import asyncpg
import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import InvalidStatus

from tests.integration.test_wire_socket import closed_with, mint, recv
from tests.integration.wire_support import wire_stack
from tests.support import projection_events as ev
from tests.support.live_server import api_server
from wire.tickets import mint_ticket

GAMES = ev.schedule(1)
DEV, FIRST_PARTY, CARDS, EVIL = "https://dev.example", "https://svc.example", "https://cards.example", "https://evil.example"


async def mint_of_kind(settings, kind: str) -> str:
    """A `ws` ticket as the first-party site or a card tool would mint it (of the test's key)."""
    conn = await asyncpg.connect(settings.database_url)
    try:
        key_id, account_id = await conn.fetchrow("SELECT id, account_id FROM access.api_keys LIMIT 1")
        ticket, _ = await mint_ticket(conn, settings.secret().encode(), key_id=key_id, account_id=account_id,
                                      plan="free", mode="live", transport="ws", topics=None, kind=kind)
    finally:
        await conn.close()
    return ticket


async def refused_upgrade(url: str, origin: str, ticket: str | None = None) -> int:
    protocols = ["svc.v1"] + ([f"svc.ticket.{ticket}"] if ticket else [])
    with pytest.raises(InvalidStatus) as refused:
        async with ws_connect(url, subprotocols=protocols, origin=origin):
            pass
    return refused.value.response.status_code


async def hello_from(url: str, origin: str | None, ticket: str) -> dict:
    async with ws_connect(url, subprotocols=["svc.v1", f"svc.ticket.{ticket}"], origin=origin) as ws:
        return await recv(ws)


async def test_origins_are_checked_before_the_upgrade_and_per_ticket_kind(settings, topics, tmp_path):
    async with wire_stack(settings, tmp_path, GAMES) as (c, key, _):
        env = {"KAFKA_BOOTSTRAP": settings.kafka_bootstrap, "SVC_TOPIC_NAMESPACE": settings.topic_namespace,
               "SVC_WIRE_PING_SECONDS": "0.5", "SVC_WIRE_ORIGINS": DEV, "SVC_WIRE_FIRST_PARTY_ORIGINS": FIRST_PARTY,
               "SVC_WIRE_CARD_ORIGINS": f"{CARDS}, https://more-cards.example"}
        with api_server(settings.database_url, settings.data_dir, settings.key_secret, tmp_path / "origins.log",
                        **env) as base:
            url = base.replace("http://", "ws://") + "/v1/wire"
            # an origin on no list: 403 before any ticket is looked at; the ticket stays usable
            ticket = (await mint(c, key))["ticket"]
            assert await refused_upgrade(url, EVIL, ticket) == 403
            assert await refused_upgrade(url, EVIL) == 403
            # each kind of ticket from its own origins only, decided before the upgrade
            assert await refused_upgrade(url, CARDS, ticket) == 403  # a key's ticket from a card origin
            assert (await hello_from(url, DEV.upper() + "/", ticket))["op"] == "hello"  # case and slash aside
            card = await mint_of_kind(settings, "card")
            assert await refused_upgrade(url, DEV, card) == 403
            assert await refused_upgrade(url, FIRST_PARTY, card) == 403
            assert (await hello_from(url, "https://more-cards.example", card))["op"] == "hello"
            first_party = await mint_of_kind(settings, "session")
            assert await refused_upgrade(url, CARDS, first_party) == 403
            hello = await hello_from(url, FIRST_PARTY, first_party)
            assert hello["op"] == "hello"
            # a ticket sent in `auth` is known only after the upgrade: 4013, and the ticket stays unused
            ticket = (await mint(c, key))["ticket"]
            async with ws_connect(url, subprotocols=["svc.v1"], origin=FIRST_PARTY) as ws:
                await ws.send(json.dumps({"op": "auth", "ticket": ticket}))
                assert await closed_with(ws) == 4013
            assert (await hello_from(url, None, ticket))["op"] == "hello"  # not a browser: no origin check
            # a session resumes only from its ticket kind's origins
            resume = {"op": "resume", "session_id": hello["session_id"], "resume_token": hello["resume_token"],
                      "last_seq": {}}
            async with ws_connect(url, subprotocols=["svc.v1"], origin=DEV) as ws:
                await ws.send(json.dumps(resume))
                assert await closed_with(ws) == 4013
            async with ws_connect(url, subprotocols=["svc.v1"], origin=FIRST_PARTY) as ws:
                await ws.send(json.dumps(resume))
                assert (await recv(ws))["op"] == "hello"

        # no lists at all: no browser gets in, other clients do
        env = {k: v for k, v in env.items() if "ORIGINS" not in k}
        with api_server(settings.database_url, settings.data_dir, settings.key_secret, tmp_path / "none.log",
                        **env) as base:
            url = base.replace("http://", "ws://") + "/v1/wire"
            ticket = (await mint(c, key))["ticket"]
            for origin in (DEV, FIRST_PARTY, CARDS, EVIL):
                assert await refused_upgrade(url, origin, ticket) == 403
            assert (await hello_from(url, None, ticket))["op"] == "hello"
