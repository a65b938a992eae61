"""What Postgres announces to API processes (infra/migrations/global/0060_change_notify.sql) and
how the listener (api/listen.py) takes it: real Postgres, real notifications."""

from __future__ import annotations

import asyncpg

import api.listen
from access.store import create_key, revoke_key
from api.listen import Listener
from infra.migrate import apply_dataset_ddl
from projections.rebuild import swap
from tests.support.listening import eventually

SERVED = ("sports", "teams", "games", "markets", "market_lines")


async def _listening(database_url: str) -> Listener:
    listener = Listener(database_url, ["live", "test"])
    listener.start()
    assert await listener.wait_connected(10)
    return listener


async def test_a_transaction_announces_each_served_table_it_changed_once_at_commit(database_url):
    listener = await _listening(database_url)
    conn = await asyncpg.connect(database_url)
    try:
        start = {t: listener.changes.version("live", (t,)) for t in SERVED}
        test_start = listener.changes.version("test", SERVED)
        async with conn.transaction():
            for slug in ("a", "b", "c"):  # three statements on one table
                await conn.execute(
                    "INSERT INTO live.sports (id, slug, name, source, as_of, provenance) "
                    "VALUES ($1, $1, $1, 'test', now(), '{}')", f"spt_{slug}")
            await conn.execute("UPDATE live.teams SET name = name")  # no rows: still a statement
        # one announcement per table per transaction, none for tables it did not touch
        moved = await eventually(lambda: _version(listener, "live", ("sports", "teams")),
                                 lambda v: v != (start["sports"][0], start["sports"][1], start["teams"][1]))
        assert moved == (start["sports"][0], start["sports"][1] + 1, start["teams"][1] + 1)
        assert listener.changes.version("live", ("games", "markets", "market_lines")) == (
            start["games"][0], start["games"][1], start["markets"][1], start["market_lines"][1])
        assert listener.changes.version("test", SERVED) == test_start  # the sandbox's own channel
    finally:
        await conn.close()
        await listener.aclose()


async def _version(listener: Listener, schema: str, tables: tuple[str, ...]) -> tuple:
    return listener.changes.version(schema, tables)


async def test_a_rebuild_swap_announces_every_table_of_the_dataset(database_url):
    listener = await _listening(database_url)
    conn = await asyncpg.connect(database_url)
    try:
        before = listener.changes.version("live", SERVED)
        await apply_dataset_ddl(conn, "live_build_swaptest")
        await conn.execute("INSERT INTO live_build_swaptest.sports (id, slug, name, source, as_of, provenance) "
                           "VALUES ('spt_x', 'x', 'x', 'test', now(), '{}')")  # the scratch schema's own channel
        await swap(conn, "live", "live_build_swaptest", keep_outbox=False)
        after = await eventually(lambda: _version(listener, "live", SERVED), lambda v: v[0] != before[0])
        assert after[0] == before[0] + 1  # the epoch: whatever was built from the old tables is gone
    finally:
        await conn.close()
        await listener.aclose()


async def test_a_revoked_key_is_announced_by_id(database_url):
    listener = await _listening(database_url)
    heard: list[str] = []
    listener.on_key_revoked.append(heard.append)
    conn = await asyncpg.connect(database_url)
    try:
        _, record = await create_key(conn, b"s", account="acme", plan="free", scopes={"read:odds"}, mode="live")
        _, other = await create_key(conn, b"s", account="acme", plan="free", scopes={"read:odds"}, mode="live")
        await revoke_key(conn, record.key_id)
        await revoke_key(conn, record.key_id)  # again: already revoked, nothing to announce

        async def got() -> list[str]:
            return list(heard)

        assert await eventually(got, lambda h: h) == [record.key_id]
        await conn.execute("DELETE FROM access.api_keys WHERE id = $1", other.key_id)  # any way a key goes
        assert await eventually(got, lambda h: len(h) == 2) == [record.key_id, other.key_id]
    finally:
        await conn.close()
        await listener.aclose()


async def test_a_lost_connection_is_noticed_and_reconnected_and_the_gap_forgotten(database_url, monkeypatch):
    monkeypatch.setattr(api.listen, "RETRY_FIRST_SECONDS", 0.05)
    listener = await _listening(database_url)
    cleared: list[int] = []
    listener.on_connected.append(lambda: cleared.append(1))
    before = listener.changes.version("live", SERVED)
    first_pid = listener.backend_pid
    conn = await asyncpg.connect(database_url)
    try:
        assert await conn.fetchval("SELECT pg_terminate_backend($1)", first_pid)

        async def state() -> tuple:
            return listener.connections, listener.backend_pid

        connections, pid = await eventually(state, lambda s: s[0] == 2, seconds=10)
        assert pid != first_pid and listener.connected
        assert cleared == [1]  # e.g. the key cache: revocations in the gap were not heard
        assert listener.changes.version("live", SERVED)[0] == before[0] + 1  # nor were changes
    finally:
        await conn.close()
        await listener.aclose()
    assert not listener.connected
