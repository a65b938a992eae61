"""The outbox relay: committed deltas to `wire.deltas`, then out of the outbox.

A batch's envelopes are committed with its read models; after the commit the projector hands
them here. The relay sends them keyed by Wire topic (one Kafka partition per topic, so each
topic's seqs stay in order) and deletes the rows only once the broker acked them. A batch goes
out without waiting for the previous batch's acks (the producer keeps each partition's order),
and acked rows are deleted off the sending path, so a slow ack or delete does not hold back
the next batch's deltas: while the relay has nothing to send it waits for the next batch, the
acks and the running DELETE at once, and tidies up after whichever comes first.
At start, and after any send error, it first sends whatever the table still holds, oldest seq
first per topic. A crash anywhere means the same stored bytes are sent again: exact duplicates,
which consumers drop by seq.

With several projectors (one consumer group over the partitions), one that dies may leave
deltas it committed but never sent. `rescan()`, called when this projector is given
partitions (a rebalance), sends what the table holds before any batch folded after it: the
orphans go out ahead of the next seqs of their topics, so no consumer sees a gap.

What the relay holds in memory is bounded (`held_max` envelopes), not by the log: a catch-up
makes deltas faster than the relay sends them (a 34,620-event catch-up here made ~14,000 a
second, the relay sent ~7,000), and an unbounded queue held every delta not yet sent, ~1 KiB
each: the projector grew by hundreds of MiB over a 1,000,000-event catch-up (issue 26 target
5). Past the bound the queue is dropped for a rescan: every envelope in it was committed to
the outbox before it was handed over, so the table sends it, oldest seq first per topic; until
the rescan starts, further batches are not queued at all (the table holds them too).
"""

from __future__ import annotations

import asyncio
import logging

import asyncpg
from aiokafka import AIOKafkaProducer
from aiokafka.partitioner import DefaultPartitioner
from aiokafka.producer.message_accumulator import BatchBuilder

log = logging.getLogger("projections.outbox")
SCAN_LIMIT = 5000
DELETE_EVERY = 0.5  # seconds: acked rows are deleted in bulk (a crash re-sends them: exact duplicates)
DELETE_AT = 5000  # ... or as soon as this many are acked
RESCAN = None  # in the queue: send what the table holds before what comes after
NOTHING = object()  # from `_next`: no item, but acks or a DELETE finished
HELD_MAX = 20_000  # envelopes queued in memory at most (~20 MiB); past it the table sends them


class OutboxRelay:
    def __init__(self, conn: asyncpg.Connection, schema: str, topic: str, producer: AIOKafkaProducer,
                 held_max: int = HELD_MAX) -> None:
        self.conn = conn
        self.topic = topic
        self.producer = producer
        self.queue: asyncio.Queue[list[tuple[str, int, bytes]] | None] = asyncio.Queue()
        self.held = 0  # envelopes in `queue`
        self.held_max = held_max
        self.overflowed = False  # the queue was dropped for a rescan that has not started yet
        self.sent = 0
        self.partitions: dict[str, int] = {}  # Wire topic -> its partition of `topic`
        self.partitioner = DefaultPartitioner()
        self.acked: list[tuple[str, int]] = []  # sent and acked, not yet deleted
        self.inflight: tuple[list[tuple[str, int]], asyncio.Future] | None = None  # sent, acks pending
        self.deleting: asyncio.Future | None = None  # the last DELETE of acked rows, if still running
        self.deleted_at = 0.0
        self.idle = asyncio.Event()
        s = f'"{schema}"'
        self.scan_sql = f"SELECT wire_topic, seq, envelope FROM {s}.outbox ORDER BY wire_topic, seq LIMIT {SCAN_LIMIT}"
        self.delete_sql = (
            f"DELETE FROM {s}.outbox WHERE (wire_topic, seq) IN (SELECT * FROM unnest($1::text[], $2::bigint[]))"
        )

    def notify(self, envelopes: list[tuple[str, int, bytes]]) -> None:
        """Envelopes of a batch that just committed."""
        if not envelopes:
            return
        self.idle.clear()
        if self.overflowed:
            return  # committed: the rescan queued sends them from the table
        if self.held + len(envelopes) > self.held_max:
            self._overflow()
            return
        self.held += len(envelopes)
        self.queue.put_nowait(envelopes)

    def _overflow(self) -> None:
        """Drop what the queue holds for one rescan: all of it is in the table (module docstring)."""
        self._clear_queue()
        self.overflowed = True
        self.queue.put_nowait(RESCAN)

    def _clear_queue(self) -> None:
        while not self.queue.empty():
            self.queue.get_nowait()
        self.held = 0

    def _take(self, items: list[tuple[str, int, bytes]] | None) -> list[tuple[str, int, bytes]] | None:
        """An item just taken off the queue (a rescan taken: batches from now on are queued
        again, for the scan starts after this and finds every batch committed before it)."""
        if items is RESCAN:
            self.overflowed = False
        else:
            self.held -= len(items)
        return items

    def rescan(self) -> None:
        """Send whatever the table holds (deltas another projector committed and did not send)
        before the envelopes of any batch notified after this call."""
        self.idle.clear()
        self.queue.put_nowait(RESCAN)

    async def run(self) -> None:
        while True:
            try:
                await self._send_stored()
                while True:
                    if self.queue.empty():
                        self._tidy()
                        if self.queue.empty() and self.inflight is None and self.deleting is None and not self.acked:
                            self.idle.set()
                    items = await self._next()
                    if items is NOTHING:
                        continue
                    items = self._take(items)
                    rescan = items is RESCAN
                    items = items or []
                    while not rescan and not self.queue.empty() and len(items) < SCAN_LIMIT:
                        more = self._take(self.queue.get_nowait())
                        rescan = more is RESCAN
                        items.extend(more or [])
                    if items:
                        await self._send(items)
                    if rescan:
                        await self._settle()
                        await self._delete_acked()
                        await self._send_stored()
            except asyncio.CancelledError:
                if self.deleting is not None:
                    self.deleting.cancel()
                raise
            except Exception as exc:  # the broker or database hiccuped: start over from the table
                if self.conn.is_closed():
                    raise  # the database connection is gone: let the process restart cleanly
                log.warning("outbox relay: %r; resending what the outbox holds", exc)
                await self._abandon()
                self._clear_queue()
                self.overflowed = False  # the table is sent next (loop top), after the pause
                await asyncio.sleep(1.0)

    async def _next(self):
        """The next item handed over; NOTHING when the acks in flight or the running DELETE
        finish first (there is tidying to do), or after DELETE_EVERY. Never waits on them: a
        batch handed over goes out whatever an ack or a DELETE still waits for."""
        get = asyncio.ensure_future(self.queue.get())
        busy = [f for f in (self.inflight and self.inflight[1], self.deleting) if f is not None]
        await asyncio.wait([get, *busy], timeout=DELETE_EVERY, return_when=asyncio.FIRST_COMPLETED)
        if get.done():
            return get.result()
        get.cancel()  # the item, should one come now, stays in the queue
        return NOTHING

    def _tidy(self) -> None:
        """Without waiting: take in the acks that came, check a finished DELETE (raising what
        failed), and start deleting what is acked."""
        if self.inflight is not None and self.inflight[1].done():
            (keys, acks), self.inflight = self.inflight, None
            acks.result()
            self.acked.extend(keys)
        self._start_delete()

    async def _send_stored(self) -> None:
        while True:
            rows = await self.conn.fetch(self.scan_sql)
            if not rows:
                return
            await self._send([(r["wire_topic"], r["seq"], r["envelope"]) for r in rows])
            await self._settle()
            await self._delete_acked()  # before the next scan, or it would find them again
            if len(rows) < SCAN_LIMIT:
                return

    async def _send(self, items: list[tuple[str, int, bytes]]) -> None:
        """One record batch per partition instead of a `send` per delta: a `send` (partitioner,
        futures, the accumulator's bookkeeping) cost the live projector's event loop more than
        its Postgres writes did at 2,000 events/s. Each topic still goes to the partition `send`
        would have chosen for its key, in order."""
        batches: dict[int, BatchBuilder] = {}
        futures = []
        for topic, _, value in items:
            key = topic.encode()
            partition = self.partitions.get(topic)
            if partition is None:
                partition = self.partitions[topic] = await self._partition_of(key)
            batch = batches.get(partition)
            if batch is None:
                batch = batches[partition] = self.producer.create_batch()
            if batch.append(key=key, value=value, timestamp=None) is None:  # full: send it, start the next
                futures.append(await self.producer.send_batch(batch, self.topic, partition=partition))
                batch = batches[partition] = self.producer.create_batch()
                if batch.append(key=key, value=value, timestamp=None) is None:
                    raise ValueError(f"a delta of {topic!r} is larger than a whole record batch")
        for partition, batch in batches.items():
            futures.append(await self.producer.send_batch(batch, self.topic, partition=partition))
        self.sent += len(items)
        previous, self.inflight = self.inflight, ([(t, s) for t, s, _ in items], asyncio.gather(*futures))
        if previous is not None:
            await self._acked(previous)
        if len(self.acked) >= DELETE_AT or asyncio.get_running_loop().time() - self.deleted_at >= DELETE_EVERY:
            self._start_delete()

    async def _partition_of(self, key: bytes) -> int:
        """The partition the producer's own partitioner gives `key` (what `send` would pick)."""
        partitions = sorted(await self.producer.partitions_for(self.topic))
        return self.partitioner(key, partitions, partitions)

    async def _acked(self, entry: tuple[list[tuple[str, int]], asyncio.Future]) -> None:
        keys, acks = entry
        await acks
        self.acked.extend(keys)

    async def _settle(self) -> None:
        """Wait for the acks of what was sent last."""
        if self.inflight is not None:
            entry, self.inflight = self.inflight, None
            await self._acked(entry)

    async def _deleted(self) -> None:
        """Wait for the DELETE still running, if any: the connection runs one statement at a time."""
        if self.deleting is not None:
            deleting, self.deleting = self.deleting, None
            await deleting

    async def _delete_acked(self) -> None:
        """DELETE every acked row, and wait for it."""
        await self._deleted()
        self._start_delete()
        await self._deleted()

    def _start_delete(self) -> None:
        """DELETE the acked rows in the background, unless a DELETE is still running (the
        connection runs one statement at a time: they wait for the next one)."""
        if self.deleting is not None:
            if not self.deleting.done():
                return
            deleting, self.deleting = self.deleting, None
            deleting.result()  # a failed DELETE raises here
        if self.acked:
            acked, self.acked = self.acked, []
            self.deleting = asyncio.ensure_future(
                self.conn.execute(self.delete_sql, [t for t, _ in acked], [s for _, s in acked]))
        self.deleted_at = asyncio.get_running_loop().time()

    async def _abandon(self) -> None:
        """After an error: what was sent or acked is still in the table and goes again (exact
        duplicates); a DELETE still running finishes first, failed or not."""
        if self.inflight is not None:
            _, acks = self.inflight
            self.inflight = None
            acks.add_done_callback(lambda f: f.cancelled() or f.exception())  # nobody awaits them now
        try:
            await self._deleted()
        except Exception:
            pass
        self.acked = []

    async def drain(self, timeout: float) -> bool:
        """Wait until everything handed over was sent (at shutdown)."""
        try:
            await asyncio.wait_for(self.idle.wait(), timeout)
            return True
        except asyncio.TimeoutError:
            return False
