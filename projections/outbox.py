"""The outbox relay: committed deltas to `wire.deltas`, then out of the outbox.

A batch's envelopes are committed with its read models; after the commit the projector hands
them here. The relay sends them keyed by Wire topic (one Kafka partition per topic, so each
topic's seqs stay in order), waits for the broker's acks, and only then deletes the rows.
At start, and after any send error, it first sends whatever the table still holds, oldest seq
first per topic. A crash anywhere means the same stored bytes are sent again: exact duplicates,
which consumers drop by seq.
"""

from __future__ import annotations

import asyncio
import logging

import asyncpg
from aiokafka import AIOKafkaProducer

log = logging.getLogger("projections.outbox")
SCAN_LIMIT = 5000


class OutboxRelay:
    def __init__(self, conn: asyncpg.Connection, schema: str, topic: str, producer: AIOKafkaProducer) -> None:
        self.conn = conn
        self.topic = topic
        self.producer = producer
        self.queue: asyncio.Queue[list[tuple[str, int, bytes]]] = asyncio.Queue()
        self.sent = 0
        self.idle = asyncio.Event()
        s = f'"{schema}"'
        self.scan_sql = f"SELECT wire_topic, seq, envelope FROM {s}.outbox ORDER BY wire_topic, seq LIMIT {SCAN_LIMIT}"
        self.delete_sql = (
            f"DELETE FROM {s}.outbox WHERE (wire_topic, seq) IN (SELECT * FROM unnest($1::text[], $2::bigint[]))"
        )

    def notify(self, envelopes: list[tuple[str, int, bytes]]) -> None:
        """Envelopes of a batch that just committed."""
        if envelopes:
            self.idle.clear()
            self.queue.put_nowait(envelopes)

    async def run(self) -> None:
        while True:
            try:
                await self._send_stored()
                while True:
                    if self.queue.empty():
                        self.idle.set()
                    items = await self.queue.get()
                    while not self.queue.empty() and len(items) < SCAN_LIMIT:
                        items.extend(self.queue.get_nowait())
                    await self._send(items)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the broker or database hiccuped: start over from the table
                log.warning("outbox relay: %r; resending what the outbox holds", exc)
                while not self.queue.empty():
                    self.queue.get_nowait()
                await asyncio.sleep(1.0)

    async def _send_stored(self) -> None:
        while True:
            rows = await self.conn.fetch(self.scan_sql)
            if not rows:
                return
            await self._send([(r["wire_topic"], r["seq"], r["envelope"]) for r in rows])
            if len(rows) < SCAN_LIMIT:
                return

    async def _send(self, items: list[tuple[str, int, bytes]]) -> None:
        futures = [await self.producer.send(self.topic, value, key=topic.encode()) for topic, _, value in items]
        await asyncio.gather(*futures)
        await self.conn.execute(self.delete_sql, [t for t, _, _ in items], [s for _, s, _ in items])
        self.sent += len(items)

    async def drain(self, timeout: float) -> bool:
        """Wait until everything handed over was sent (at shutdown)."""
        try:
            await asyncio.wait_for(self.idle.wait(), timeout)
            return True
        except asyncio.TimeoutError:
            return False
