"""The outbox relay on a real broker and database: batches handed over back to back (each sent
before the previous one's acks are in) reach `wire.deltas` with every topic's seqs in order, and
the outbox ends empty; after a send fails mid-stream the relay starts over from the table, so
consumers see exact duplicates at most, never a gap, and nothing stays behind."""

from __future__ import annotations

import asyncio

from aiokafka.errors import KafkaConnectionError

from infra.db import connect
from projections.outbox import OutboxRelay
from projections.replay import catch_up
from tests.support import projection_events as ev
from tests.support.projection_harness import projector, seq_runs, wire_deltas

GAMES = ev.schedule(6)


class FailingOnce:
    """The real producer, except that its `fail_at`-th batch sent raises (a broker hiccup)."""

    def __init__(self, producer, fail_at: int) -> None:
        self.producer = producer
        self.fail_at = fail_at
        self.calls = 0

    def __getattr__(self, name):
        return getattr(self.producer, name)

    async def send_batch(self, *args, **kwargs):
        self.calls += 1
        if self.calls == self.fail_at:
            raise KafkaConnectionError("injected: the broker went away")
        return await self.producer.send_batch(*args, **kwargs)


async def _relay_run(settings, fail_at: int | None) -> tuple[OutboxRelay, int]:
    """Project a quote log in batches of 5 records (a relay batch each), relaying as it goes."""
    await ev.publish(settings, [*GAMES, *ev.season_quotes(GAMES, ["b0", "b1", "b2"], 4, seed=3)])
    sender = None if fail_at is None else (lambda producer: FailingOnce(producer, fail_at))
    async with projector(settings, sender=sender) as p:
        await catch_up(p, p.conn, batch_records=5)
        assert await p.relay.drain(30)
        assert await p.conn.fetchval("SELECT count(*) FROM live.outbox") == 0
        return p.relay, p.stats.deltas


async def test_batches_sent_back_to_back_keep_every_topics_order(settings, topics):
    relay, made = await _relay_run(settings, fail_at=None)
    runs = seq_runs(await wire_deltas(settings))
    assert made > 100 and sum(len(r) for r in runs.values()) == made == relay.sent
    assert all(r == list(range(1, len(r) + 1)) for r in runs.values())


async def test_a_failed_send_starts_over_from_the_table_with_duplicates_only(settings, topics):
    relay, made = await _relay_run(settings, fail_at=10)  # of ~40 batches: mid-stream
    delivered = await wire_deltas(settings)
    runs = seq_runs(delivered)  # fails on a seq delivered twice with different bytes
    assert sum(len(r) for r in runs.values()) == made > 100
    assert all(r == list(range(1, len(r) + 1)) for r in runs.values())
    assert relay.sent > made  # some went twice: the batches in flight and acked but not deleted


async def test_a_rescan_sends_what_another_projector_left_before_the_next_batch(settings, topics):
    """Deltas committed by a projector that died before sending them (rows in the outbox nobody
    notified this relay of) go out when this one is given partitions: ahead of the next seqs."""
    await ev.publish(settings, [*GAMES, *ev.season_quotes(GAMES, ["b0", "b1"], 2, seed=5)])
    async with projector(settings) as p:
        await catch_up(p, p.conn, batch_records=7)
        assert await p.relay.drain(30)
        before = await wire_deltas(settings)
        # the newest delta of one topic, as the dying projector's outbox would still hold it
        topic, seq, raw = before[-1][2].topic, before[-1][2].seq, before[-1][1]
        orphan_seq = seq + 1
        orphan = raw.replace(f'"seq":{seq}'.encode(), f'"seq":{orphan_seq}'.encode())
        assert orphan != raw
        await p.conn.execute("INSERT INTO live.outbox (wire_topic, seq, envelope) VALUES ($1, $2, $3)",
                             topic, orphan_seq, orphan)
        p.relay.rescan()
        follower = raw.replace(f'"seq":{seq}'.encode(), f'"seq":{orphan_seq + 1}'.encode())
        await p.conn.execute("INSERT INTO live.outbox (wire_topic, seq, envelope) VALUES ($1, $2, $3)",
                             topic, orphan_seq + 1, follower)
        p.relay.notify([(topic, orphan_seq + 1, follower)])
        assert await p.relay.drain(30)
        assert await p.conn.fetchval("SELECT count(*) FROM live.outbox") == 0
    after = await wire_deltas(settings)
    added = [(env.topic, env.seq) for _, _, env in after[len(before):]]
    assert added[:2] == [(topic, orphan_seq), (topic, orphan_seq + 1)]  # the orphan first
    assert set(added) == {(topic, orphan_seq), (topic, orphan_seq + 1)}  # then duplicates at most


async def test_a_delete_that_waits_does_not_hold_back_the_next_batch(settings, topics):
    """Acked rows are deleted off the sending path: while the DELETE of one batch's rows waits
    (here on row locks another transaction holds), the next batch handed over still goes out."""
    await ev.publish(settings, [*GAMES, *ev.season_quotes(GAMES, ["b0"], 1, seed=7)])
    async with projector(settings) as p:
        await catch_up(p, p.conn, batch_records=50)
        assert await p.relay.drain(30)
        last = (await wire_deltas(settings))[-1]
        topic, seq, raw = last[2].topic, last[2].seq, last[1]
        first, second = (raw.replace(f'"seq":{seq}'.encode(), f'"seq":{seq + k}'.encode()) for k in (1, 2))
        insert = "INSERT INTO live.outbox (wire_topic, seq, envelope) VALUES ($1, $2, $3)"
        await p.conn.execute(insert, topic, seq + 1, first)
        blocker = await connect(settings.database_url)
        try:
            await blocker.execute("BEGIN")
            await blocker.fetch("SELECT 1 FROM live.outbox FOR UPDATE")  # the first row's DELETE waits on this
            p.relay.notify([(topic, seq + 1, first)])
            await p.conn.execute(insert, topic, seq + 2, second)
            p.relay.notify([(topic, seq + 2, second)])
            seen: set[int] = set()
            for _ in range(100):
                seen = {env.seq for _, _, env in await wire_deltas(settings) if env.topic == topic}
                if seq + 2 in seen:
                    break
                await asyncio.sleep(0.2)
            assert {seq + 1, seq + 2} <= seen
            assert await blocker.fetchval("SELECT count(*) FROM live.outbox") == 2  # neither deleted yet
        finally:
            await blocker.execute("ROLLBACK")
            await blocker.close()
        assert await p.relay.drain(30)
        assert await p.conn.fetchval("SELECT count(*) FROM live.outbox") == 0


class Held:
    """The real producer behind a broker that has not acked anything yet: sends wait for `go`."""

    def __init__(self, producer) -> None:
        self.producer = producer
        self.go = asyncio.Event()

    def __getattr__(self, name):
        return getattr(self.producer, name)

    async def send_batch(self, *args, **kwargs):
        await self.go.wait()
        return await self.producer.send_batch(*args, **kwargs)


HELD = 100  # the relay's bound in this test (a deployment's: outbox.HELD_MAX)


def _queued(relay: OutboxRelay) -> int:
    """Envelopes waiting in the relay's queue (read from the queue itself, not the relay's count)."""
    return sum(len(items) for items in relay.queue._queue if items)


async def test_a_relay_behind_the_projector_holds_a_bounded_queue_however_long_the_log(settings, topics):
    """A catch-up makes deltas faster than the broker takes them (issue 26 target 5: the queue
    grew with the log). Over a log of N and then 3N records, with nothing sent meanwhile, the
    relay queues at most `held_max` envelopes; the rest goes from the table once the broker
    answers: every topic's seqs complete and in order, the outbox empty."""
    books = ["b0", "b1", "b2", "b3"]
    held: Held | None = None

    def hold(producer):
        nonlocal held
        held = Held(producer)
        return held

    peaks = []
    async with projector(settings, sender=hold) as p:
        p.relay.held_max = HELD
        notify = p.relay.notify
        peak = [0]

        def counting(envelopes):
            notify(envelopes)
            peak[0] = max(peak[0], _queued(p.relay))

        p.relay.notify = counting
        for first, rounds in ((0, 4), (4, 8)):  # N records, then 2N more: 3N in all
            quotes = ev.season_quotes(GAMES, books, rounds, seed=first, first_minute=first, tag=f"h{first}")
            await ev.publish(settings, [*GAMES, *quotes] if first == 0 else quotes)
            await catch_up(p, p.conn, batch_records=20)
            peaks.append((p.stats.deltas, peak[0]))
        held.go.set()
        assert await p.relay.drain(60)
        assert await p.conn.fetchval("SELECT count(*) FROM live.outbox") == 0
    made = p.stats.deltas
    assert peaks[0][0] > 2 * HELD and made > 2.5 * peaks[0][0]  # the bound binds; the log grew ~3x
    assert all(queued <= HELD for _, queued in peaks), peaks
    runs = seq_runs(await wire_deltas(settings))
    assert sum(len(r) for r in runs.values()) == made
    assert all(r == list(range(1, len(r) + 1)) for r in runs.values())
