"""In-process projector pieces for integration tests: open a dataset projector on the test's
database, catch it up, relay its outbox, and read back what went to `wire.deltas`; or, with no
broker at all, write a list of events into a dataset's read models (`project`)."""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager

import msgspec
from aiokafka import TopicPartition

from infra.db import connect
from infra.kafka import make_consumer, make_producer
from infra.log_epoch import ensure_epoch
from infra.aiokafka_adapter import partitions_of
from projections.log_ends import high_watermarks
from projections.outbox import OutboxRelay
from projections.projector import DatasetProjector
from projections.replay import BATCH_RECORDS, catch_up
from schemas.datasets import WIRE_DELTAS, pg_schema, topic_name
from schemas.events import encode, event_topic
from schemas.wire import decode_envelope


@asynccontextmanager
async def projector(settings, dataset="live", relay=True, sender=None):
    """A live projector of `dataset` with its outbox relay running (`sender`: wraps the relay's
    producer, to inject faults)."""
    conn = await connect(settings.database_url)
    relay_conn = await connect(settings.database_url)
    producer = make_producer(settings, linger_ms=1)
    await producer.start()
    p = DatasetProjector(settings, dataset)
    task = None
    try:
        await p.open(conn, await ensure_epoch(settings, dataset))
        if relay:
            p.relay = OutboxRelay(relay_conn, pg_schema(dataset), topic_name(dataset, WIRE_DELTAS,
                                  settings.topic_namespace), producer if sender is None else sender(producer))
            task = asyncio.create_task(p.relay.run())
        p.conn = conn
        yield p
        if relay:
            assert await p.relay.drain(20)
    finally:
        if task is not None:
            task.cancel()
        p.close()
        await producer.stop()
        await conn.close()
        await relay_conn.close()


async def run_to_end(p) -> int:
    return await catch_up(p, p.conn)


class _Record(msgspec.Struct):
    topic: str
    partition: int
    offset: int
    value: bytes


async def project(settings, conn, events, dataset="live", batch=BATCH_RECORDS) -> int:
    """`events` through the real projector into `dataset`'s schema, without a broker: each
    event encoded as its log record (one partition per feed topic, in the order given), folded
    by the batch core and written by the Postgres writer `batch` records at a time, as a
    catch-up does. The Wire deltas it makes stay in the outbox. Returns the events applied."""
    p = DatasetProjector(settings, dataset, use_cache=False)
    try:
        await p.open(conn, "in-process")
        ends: dict[str, int] = {}
        records = []
        for e in events:
            topic = topic_name(dataset, event_topic(e), settings.topic_namespace)
            ends[topic] = ends.get(topic, -1) + 1
            records.append(_Record(topic, 0, ends[topic], encode(e)))
        for i in range(0, len(records), batch):
            await p.apply(conn, records[i:i + batch])
        assert p.stats.bad == 0
        return p.stats.applied
    finally:
        p.close()


async def wire_deltas(settings, dataset="live"):
    """Every envelope on the dataset's wire.deltas topic, in log order per partition."""
    consumer = make_consumer(settings, fetch_max_wait_ms=50)
    await consumer.start()
    try:
        topic = topic_name(dataset, WIRE_DELTAS, settings.topic_namespace)
        tps = await partitions_of(consumer, [topic])
        ends = await high_watermarks(consumer, tps)
        out = []
        for tp in tps:
            end = ends[(tp.topic, tp.partition)]
            consumer.assign([tp])
            consumer.seek(tp, 0)
            got = []
            while len(got) < end:
                data = await consumer.getmany(tp, timeout_ms=500)
                got.extend(data.get(tp, []))
            out.extend((r.key.decode(), r.value, decode_envelope(r.value)) for r in got)
        return out
    finally:
        await consumer.stop()


def seq_runs(deltas) -> dict[str, list[int]]:
    """Per Wire topic the seqs in arrival order, exact duplicates dropped (a different envelope
    under a seen seq is a failure)."""
    seen: dict[tuple[str, int], bytes] = {}
    runs: dict[str, list[int]] = {}
    for key, raw, env in deltas:
        assert key == env.topic
        prior = seen.get((env.topic, env.seq))
        if prior is not None:
            assert prior == raw, f"{env.topic} seq {env.seq} delivered twice with different bytes"
            continue
        seen[(env.topic, env.seq)] = raw
        runs.setdefault(env.topic, []).append(env.seq)
    return runs


__all__ = ["projector", "run_to_end", "project", "wire_deltas", "seq_runs", "TopicPartition"]


def projector_env(settings) -> dict:
    import os

    env = dict(os.environ)
    env.update(
        KAFKA_BOOTSTRAP=settings.kafka_bootstrap, DATABASE_URL=settings.database_url,
        SVC_TOPIC_NAMESPACE=settings.topic_namespace, SVC_DATA_DIR=str(settings.data_dir),
        SVC_TOPIC_PARTITIONS=str(settings.topic_partitions),
        SVC_DELTA_PARTITIONS=str(settings.delta_partitions), SVC_KEY_SECRET="test-secret",
        SVC_LOG_JSON="true", PYTHONUNBUFFERED="1",
    )
    return env


def start_projector(settings, log_path, **env):
    """`svc projector run` as its own process, as the supervisor starts it (`env`: extra
    environment, e.g. SVC_CATCH_UP_BATCH)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    out = open(log_path, "ab")
    try:
        return subprocess.Popen([sys.executable, "-m", "cli.main", "projector", "run"], env={**projector_env(settings), **env},
                                cwd=root, stdout=out, stderr=subprocess.STDOUT)
    finally:
        out.close()


async def log_shows(log_path, text: str, timeout: float) -> bool:
    """True once `text` is in the log file (a process's own log: `start_projector`'s), polled
    every 0.1 s; False after `timeout` s."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in log_path.read_text():
            return True
        await asyncio.sleep(0.1)
    return False


async def burst_through_a_hand_back(settings, log_path, hold, burst) -> None:
    """Append `burst` while the live path is held back for certain, whatever this machine's
    speed (no batch can commit while `hold`, a connection, keeps live.tracking locked), so the
    projector of `start_projector` hands the partition to the bulk path; returns once it is back
    on the live path at the head. The projector must have resumed live first."""
    from tests.support import projection_events as ev

    tx = hold.transaction()
    await tx.start()
    await hold.execute("LOCK TABLE live.tracking IN EXCLUSIVE MODE")
    try:
        await ev.publish(settings, burst)
        assert await log_shows(log_path, "handing it to the bulk path", 30), log_path.read_text()[-3000:]
    finally:
        await tx.rollback()
    assert await log_shows(log_path, "back to the live path at the head", 60), log_path.read_text()[-3000:]


async def caught_up(settings, timeout: float, datasets=("live", "test")) -> bool:
    """True once every feed partition is applied and every outbox is empty."""
    import time

    from projections.lag import measure

    conn = await connect(settings.database_url)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            rows, outbox = await measure(settings, conn, datasets)
            if all(r.lag == 0 for r in rows) and not any(outbox.values()):
                return True
            await asyncio.sleep(0.2)
        return False
    finally:
        await conn.close()


async def verified(settings, dataset="live"):
    """What `svc projections verify` finds for `dataset`: a rebuild into a scratch schema
    compared with the live read models (its three connections: work, lock, snapshot)."""
    from projections.rebuild import verify

    conns = [await connect(settings.database_url) for _ in range(3)]
    try:
        return await verify(settings, dataset, *conns)
    finally:
        for c in conns:
            await c.close()
