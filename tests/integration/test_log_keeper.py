"""The kept log (infra/log_copy.py, infra/log_keeper.py) on a real tansu broker.

Records produced through the keeper come back after a restart of the keeper, clean or by
SIGKILL, at the same offsets with the same keys, headers and timestamps; a copy that is damaged
or of another layout is refused with a message that says what is wrong and what to run.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.record.default_records import DefaultRecordBatchBuilder
from rocksdict import Options, Rdict

from infra.log_copy import LogCopy, LogCopyError, log_dir, reset
from infra.log_keeper import EXIT_REFUSED
from infra.net import free_port, wait_port

TOPIC = "kept"


class Keeper:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> Keeper:
        self.proc = subprocess.Popen([sys.executable, "-m", "infra.log_keeper", "--data-dir", str(self.data_dir),
                                      "--port", str(self.port)], stderr=subprocess.PIPE)
        wait_port("127.0.0.1", self.port, 30, lambda: self.proc.poll() is None)
        return self

    def stop(self, sig: int = signal.SIGTERM) -> int:
        self.proc.send_signal(sig)
        code = self.proc.wait(30)
        self.proc.stderr.close()
        return code


async def produce(address: str, n: int, start: int = 0, partitions: int = 3) -> list[tuple[int, int]]:
    admin = AIOKafkaAdminClient(bootstrap_servers=address)
    await admin.start()
    try:
        if TOPIC not in await admin.list_topics():
            await admin.create_topics([NewTopic(TOPIC, partitions, 1)])
    finally:
        await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=address, acks="all", linger_ms=2)
    await producer.start()
    try:
        # some sends one at a time (one-record batches), the rest gathered (large batches)
        results = [await (await producer.send(TOPIC, f"v{i}".encode(), key=f"k{i % 11}".encode(),
                                              headers=[("n", str(i).encode())], timestamp_ms=1_700_000_000_000 + i))
                   for i in range(start, start + 20)]
        futures = [await producer.send(TOPIC, f"v{i}".encode(), key=f"k{i % 11}".encode(),
                                       headers=[("n", str(i).encode())], timestamp_ms=1_700_000_000_000 + i)
                   for i in range(start + 20, start + n)]
        results += await asyncio.gather(*futures)
    finally:
        await producer.stop()
    return [(r.partition, r.offset) for r in results]


async def read_all(address: str, partitions: int = 3) -> list[tuple]:
    consumer = AIOKafkaConsumer(bootstrap_servers=address, auto_offset_reset="earliest", enable_auto_commit=False,
                                fetch_max_wait_ms=10)
    await consumer.start()
    try:
        tps = [TopicPartition(TOPIC, p) for p in range(partitions)]
        consumer.assign(tps)
        ends = {}
        for tp in tps:  # the high watermark (tansu's listed end undercounts batched records)
            consumer.seek(tp, 0)
        out, seen = [], {tp: 0 for tp in tps}
        for _ in range(200):
            batch = await consumer.getmany(timeout_ms=50)
            for tp, records in batch.items():
                out += [(r.partition, r.offset, r.key, r.value, r.timestamp, tuple(r.headers)) for r in records]
                seen[tp] += len(records)
            ends = {tp: consumer.highwater(tp) for tp in tps}
            if all(e is not None and seen[tp] >= e for tp, e in ends.items()):
                break
        return sorted(out)
    finally:
        await consumer.stop()


async def test_records_come_back_at_their_offsets_after_a_clean_stop_and_a_sigkill(tmp_path):
    keeper = Keeper(tmp_path).start()
    try:
        acked = await produce(keeper.address, 300)
        first = await read_all(keeper.address)
    finally:
        assert keeper.stop() == 0
    assert sorted(acked) == [(p, o) for p, o, *_ in first] and len(first) == 300

    keeper.start()
    assert await read_all(keeper.address) == first  # same offsets, keys, values, timestamps, headers
    acked += await produce(keeper.address, 200, start=300)
    second = await read_all(keeper.address)
    assert len(second) == 500 and second[:0] == [] and set(first) <= set(second)
    assert keeper.stop(signal.SIGKILL) == -signal.SIGKILL  # no flush, no clean close

    keeper.start()
    try:
        assert await read_all(keeper.address) == second
        copy = LogCopy.open(tmp_path, read_only=True)
        try:
            assert copy.records_per_topic() == {TOPIC: 500}
        finally:
            copy.close()
    finally:
        keeper.stop()


def _batch(first: int, n: int) -> bytes:
    builder = DefaultRecordBatchBuilder(2, 0, 0, -1, -1, -1, 1 << 20)
    for i in range(n):
        builder.append(i, 1_700_000_000_000 + first + i, f"k{first + i}".encode(), f"v{first + i}".encode(), [])
    return bytes(builder.build())


def kept(data_dir: Path, batches: int = 5, size: int = 4) -> None:
    copy = LogCopy.open(data_dir)
    copy.register(TOPIC, 1)
    copy.append([(TOPIC, 0, i * size, _batch(i * size, size)) for i in range(batches)])
    copy.close()


def read_through(data_dir: Path) -> int:
    copy = LogCopy.open(data_dir)
    try:
        return sum(1 for _ in copy.batches(TOPIC, 0))
    finally:
        copy.close()


def test_a_sound_copy_reads_back_in_order(tmp_path):
    kept(tmp_path)
    assert read_through(tmp_path) == 5
    copy = LogCopy.open(tmp_path)
    assert copy.ends() == {(TOPIC, 0): 20} and copy.records_per_topic() == {TOPIC: 20}
    copy.close()


def test_a_gap_in_offsets_is_refused_naming_the_partition_and_what_to_run(tmp_path):
    kept(tmp_path)
    db = Rdict(str(log_dir(tmp_path)), Options(raw_mode=True))
    middle = [k for k in db.keys() if k.startswith(b"b")][2]
    db.delete(middle)
    db.close()
    with pytest.raises(LogCopyError) as refused:
        read_through(tmp_path)
    message = str(refused.value)
    assert f"{TOPIC}[0] jumps from offset 8 to 12" in message and "svc log reset" in message


def test_a_missing_segment_is_refused(tmp_path):
    kept(tmp_path)
    tables = list(log_dir(tmp_path).glob("*.sst"))
    assert tables  # closing flushed the records into a table file
    tables[0].unlink()
    with pytest.raises(LogCopyError) as refused:
        read_through(tmp_path)
    assert "damaged" in str(refused.value) and "svc log reset" in str(refused.value)


def test_a_truncated_segment_is_refused(tmp_path):
    kept(tmp_path, batches=50)
    table = max(log_dir(tmp_path).glob("*.sst"), key=lambda p: p.stat().st_size)
    with open(table, "r+b") as f:
        f.truncate(table.stat().st_size // 2)
    with pytest.raises(LogCopyError) as refused:
        read_through(tmp_path)
    assert "damaged" in str(refused.value) and "svc log reset" in str(refused.value)


def test_another_layout_and_a_data_dir_from_before_the_kept_log_are_refused(tmp_path):
    kept(tmp_path / "a")
    db = Rdict(str(log_dir(tmp_path / "a")), Options(raw_mode=True))
    db.put(b"layout", b"0")
    db.close()
    with pytest.raises(LogCopyError, match="has layout 0, this svc reads layout 1"):
        LogCopy.open(tmp_path / "a")

    older = tmp_path / "b"
    (older / "pg" / "data").mkdir(parents=True)  # a stack ran here, its log was in memory
    with pytest.raises(LogCopyError, match="older layout") as refused:
        LogCopy.open(older)
    assert f"svc log reset --data-dir {older}" in str(refused.value)
    assert not log_dir(older).exists()  # nothing created behind the user's back

    # what the message says to run: the old copy is moved aside, an empty log starts
    assert reset(older) is None
    assert LogCopy.open(older).records_per_topic() == {}
    moved = reset(tmp_path / "a")
    assert moved is not None and moved.name == "log.moved-1" and (moved / "CURRENT").exists()
    assert LogCopy.open(tmp_path / "a").records_per_topic() == {}


def test_the_keeper_refuses_a_damaged_copy_before_it_listens(tmp_path):
    kept(tmp_path)
    db = Rdict(str(log_dir(tmp_path)), Options(raw_mode=True))
    db.delete([k for k in db.keys() if k.startswith(b"b")][1])
    db.close()
    port = free_port()
    done = subprocess.run([sys.executable, "-m", "infra.log_keeper", "--data-dir", str(tmp_path), "--port", str(port)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == EXIT_REFUSED
    assert f"refused: the log kept in {log_dir(tmp_path)} is damaged: {TOPIC}[0] jumps from offset 4 to 8" in done.stderr


async def test_a_deleted_topic_stays_deleted_and_a_recreated_one_starts_empty(tmp_path):
    keeper = Keeper(tmp_path).start()
    try:
        await produce(keeper.address, 40)
        admin = AIOKafkaAdminClient(bootstrap_servers=keeper.address)
        await admin.start()
        try:
            await admin.delete_topics([TOPIC])
        finally:
            await admin.close()
        copy = LogCopy.open(tmp_path, read_only=True)
        assert copy.records_per_topic() == {}
        copy.close()
        acked = await produce(keeper.address, 30, partitions=2)  # recreated: offsets from 0 again
        assert sorted(acked) == [(p, o) for p, o, *_ in await read_all(keeper.address, 2)]
    finally:
        assert keeper.stop() == 0
    keeper.start()
    try:
        records = await read_all(keeper.address, 2)
        assert len(records) == 30 and {r[3] for r in records} == {f"v{i}".encode() for i in range(30)}
    finally:
        keeper.stop()
