"""The projector's batch write on a real database (projections/pg_writer.py): a batch is one
statement on its own, so a stale writer's batch must be refused by that statement, whole; and the
dataset's lock, which live batches now keep from one batch to the next, must still let a rebuild
in while they keep writing, with no batch committing while the rebuild holds it."""

from __future__ import annotations

import asyncio

import msgspec
import pytest

from infra.db import connect
from projections.locks import projector_lock_key
from projections.pg_writer import SHARED_LOCK_HOLD, StaleState
from projections.projector import DatasetProjector
from schemas.datasets import topic_name
from schemas.events import encode, event_topic
from tests.support import projection_events as ev

GAMES = ev.schedule(4)
TABLES = ("games", "markets", "market_lines", "book_prices", "topic_seq", "projector_state", "tracking", "outbox")


class _Record(msgspec.Struct):
    topic: str
    partition: int
    offset: int
    value: bytes


class _Log:
    """Events as log records, one partition per feed topic, offsets in the order made."""

    def __init__(self, settings) -> None:
        self.settings = settings
        self.ends: dict[str, int] = {}
        self.minute = 0

    def records(self, events) -> list[_Record]:
        out = []
        for e in events:
            topic = topic_name("live", event_topic(e), self.settings.topic_namespace)
            self.ends[topic] = self.ends.get(topic, -1) + 1
            out.append(_Record(topic, 0, self.ends[topic], encode(e)))
        return out

    def quotes(self, n: int) -> list[_Record]:
        out = []
        for _ in range(n):
            self.minute += 1
            g = GAMES[self.minute % len(GAMES)]
            out.append(ev.quote(g.game_id, f"b{self.minute % 3}", [-110 - self.minute % 9, -105 + self.minute % 7],
                                minute=self.minute))
        return self.records(out)


async def _rows(conn) -> dict[str, list]:
    return {t: [tuple(r) for r in await conn.fetch(f"SELECT * FROM live.{t} ORDER BY 1, 2")] for t in TABLES}


async def _advisory_locks(conn, pid: int) -> int:
    return await conn.fetchval("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = $1", pid)


@pytest.fixture
async def opened(settings):
    conn, other = await connect(settings.database_url), await connect(settings.database_url)
    p = DatasetProjector(settings, "live", use_cache=False)
    try:
        await p.open(conn, "in-process")
        log = _Log(settings)
        await p.apply(conn, log.records(GAMES))
        yield p, conn, other, log
    finally:
        p.close()
        await conn.close()
        await other.close()


@pytest.mark.parametrize("moved", ["tracking", "generation"])
async def test_a_stale_writers_batch_is_refused_whole(opened, moved):
    """Tracking moved without this projector (another writer), or a rebuilt schema's generation:
    the batch statement fails and writes nothing at all, though no transaction was opened."""
    p, conn, other, log = opened
    await p.apply(conn, log.quotes(5))
    if moved == "tracking":
        await other.execute("UPDATE live.tracking SET last_offset = last_offset + 1")
    else:
        await other.execute("UPDATE live.projection_meta SET generation = generation + 1")
    before = await _rows(other)
    batch = p.fold(log.quotes(5))
    assert batch.rows.rows["book_prices"] and batch.envelopes  # the batch has rows to write
    with pytest.raises(StaleState):
        await p.write(conn, batch)
    assert await _rows(other) == before


async def test_a_batch_holds_the_dataset_lock_only_while_it_is_written_unless_told_to_keep_it(opened):
    p, conn, other, log = opened
    pid = conn.get_server_pid()
    await p.apply(conn, log.quotes(3))
    assert await _advisory_locks(other, pid) == 0  # a rebuild or verify is not kept waiting
    await p.apply(conn, log.quotes(3), hold=True)
    assert await _advisory_locks(other, pid) == 1
    await p.release()
    assert await _advisory_locks(other, pid) == 0


async def test_a_writer_that_keeps_the_lock_lets_a_rebuild_in_and_commits_nothing_while_it_holds_it(opened):
    """A rebuild takes the dataset's lock exclusively while the live writer keeps writing (each
    batch keeping the lock for the next): the writer lets it in, no batch commits while the
    rebuild holds it, and the writer goes on once it is released."""
    p, conn, other, log = opened
    written = 0
    stop = asyncio.Event()

    async def keep_writing() -> None:
        nonlocal written
        while not stop.is_set():
            await p.apply(conn, log.quotes(5), hold=True)
            written += 1
        await p.release()

    writer = asyncio.create_task(keep_writing())
    try:
        while written < 3:
            await asyncio.sleep(0.01)
        await other.execute("SELECT pg_advisory_lock($1)", projector_lock_key("live"))  # as rebuild() does
        try:
            held = [tuple(r) for r in await other.fetch("SELECT * FROM live.tracking ORDER BY 1, 2")]
            at = written
            await asyncio.sleep(3 * SHARED_LOCK_HOLD)  # room for batches that must not commit
            assert [tuple(r) for r in await other.fetch("SELECT * FROM live.tracking ORDER BY 1, 2")] == held
            assert written == at  # the writer let the lock go before a batch, and waits for it there
        finally:
            await other.execute("SELECT pg_advisory_unlock($1)", projector_lock_key("live"))
        while written < at + 3:  # and the writer goes on
            await asyncio.sleep(0.01)
    finally:
        stop.set()
        await writer
    assert [tuple(r) for r in await other.fetch("SELECT * FROM live.tracking ORDER BY 1, 2")] != held
