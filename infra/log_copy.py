"""The durable copy of the embedded broker's log: every record batch, in `<data-dir>/log/`.

The embedded broker (tansu) keeps its log in memory only. The log keeper (`infra.log_keeper`)
writes each produced record batch here, synced, before the broker sees it, and restores the
copy into a fresh broker before anyone can connect. A rocksdict (RocksDB) store:

    layout                                   -> LAYOUT
    t <topic>                                -> partition count (4 bytes)
    b <topic> 0x00 <partition:4> <offset:8>  -> one record batch (magic 2), as the producer sent it

Batch keys sort by topic, partition, then base offset, so a prefix scan reads a partition in
log order. A batch holds key, headers, timestamp and value of each of its records; the broker
assigns it the offsets base .. base + count - 1.
"""

from __future__ import annotations

import shutil
import struct
import time
from collections.abc import Iterator
from pathlib import Path

from rocksdict import AccessType, DBRecoveryMode, Options, Rdict, WriteBatch, WriteOptions

from infra.kafka_protocol import at_offset, batch_count

LAYOUT = b"1"
DIR = "log"
_LAYOUT_KEY = b"layout"
_TOPIC = b"t"
_BATCH = b"b"
_COUNT = struct.Struct(">I")


class LogCopyError(Exception):
    """The copy cannot be used as it is; the message says what is wrong and what to run."""


def log_dir(data_dir: Path) -> Path:
    return data_dir / DIR


def _prefix(topic: str, partition: int | None = None) -> bytes:
    base = _BATCH + topic.encode() + b"\x00"
    return base if partition is None else base + _COUNT.pack(partition)


def _options() -> Options:
    opt = Options(raw_mode=True)
    opt.create_if_missing(True)
    opt.set_paranoid_checks(True)
    # a crash can tear only the last write, which was never acknowledged: drop it, refuse
    # anything else that does not read back
    opt.set_wal_recovery_mode(DBRecoveryMode.tolerate_corrupted_tail_records())
    return opt


def _open_read_only(path: Path, attempts: int = 3) -> Rdict:
    """A read-only view while the keeper may be writing: a write-ahead log file it retires
    between our listing and our reading fails one attempt, not the next."""
    for attempt in range(attempts):
        try:
            return Rdict(str(path), _options(), access_type=AccessType.read_only())
        except Exception:
            if attempt == attempts - 1:
                raise
            time.sleep(0.2)
    raise AssertionError("unreachable")


def _damaged(path: Path, what: str) -> LogCopyError:
    what = " ".join(what.replace("Corruption: Corruption:", "Corruption:").split()).rstrip(". ")
    return LogCopyError(
        f"the log kept in {path} is damaged: {what}. Restore {path} from a backup, or run "
        f"`svc log reset --data-dir {path.parent}` to move it aside and start an empty log "
        "(the read models are then rebuilt from that empty log; ingest the files again)"
    )


class LogCopy:
    def __init__(self, path: Path, db: Rdict, writable: bool) -> None:
        self.path = path
        self.db = db
        self.writable = writable
        self._sync = WriteOptions()
        self._sync.sync = True
        self._unsynced = WriteOptions()
        self.partitions: dict[str, int] = {}
        for key, value in db.items(from_key=_TOPIC):
            if not key.startswith(_TOPIC):
                break
            self.partitions[key[1:].decode()] = _COUNT.unpack(value)[0]

    @classmethod
    def open(cls, data_dir: Path, create: bool = True, read_only: bool = False) -> LogCopy:
        """Open the copy of a data dir. Refuses (LogCopyError) a data dir whose stack ran before
        the log was kept, a copy of another layout, and one RocksDB cannot read."""
        path = log_dir(data_dir)
        fresh = not (path / "CURRENT").exists()
        if fresh and (not create or read_only):
            raise LogCopyError(f"no log is kept in {path}")
        if fresh and path.exists() and any(path.iterdir()):
            raise _damaged(path, "its store's CURRENT file is missing")
        if fresh and ((data_dir / "pg" / "data").exists() or (data_dir / "stack.json").exists()):
            raise LogCopyError(
                f"{data_dir} holds a stack that ran before its log was kept on disk (older layout, "
                f"no {path}): the events of that log are gone. Run `svc log reset --data-dir {data_dir}` "
                "to start an empty log (the read models are rebuilt from it; ingest the files again)"
            )
        try:
            if read_only:
                db = _open_read_only(path)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                db = Rdict(str(path), _options())
        except Exception as exc:  # rocksdict raises plain Exception with RocksDB's status text
            text = str(exc)
            if "lock" in text.lower() and not read_only:
                raise LogCopyError(f"the log in {path} is in use by another process ({text})") from exc
            raise _damaged(path, text) from exc
        if fresh:
            db.put(_LAYOUT_KEY, LAYOUT, write_opt=_sync_options())
        layout = db.get(_LAYOUT_KEY)
        if layout != LAYOUT:
            db.close()
            if layout is None:
                raise _damaged(path, "its layout record is missing")
            raise LogCopyError(
                f"the log in {path} has layout {layout.decode(errors='replace')}, this svc reads layout "
                f"{LAYOUT.decode()}: run the svc that wrote it, or `svc log reset --data-dir {data_dir}` to "
                "move it aside and start an empty log"
            )
        return cls(path, db, writable=not read_only)

    def close(self) -> None:
        if self.writable:
            self.db.flush(wait=True)
        self.db.close()

    # ---- writing ------------------------------------------------------------------------------

    def register(self, topic: str, partitions: int) -> None:
        self.db.put(_TOPIC + topic.encode(), _COUNT.pack(partitions), write_opt=self._sync)
        self.partitions[topic] = partitions

    def append(self, batches: list[tuple[str, int, int, bytes]], sync: bool = True) -> None:
        """(topic, partition, base offset, record batch) entries, atomically. Unsynced, they are
        written to the store's write-ahead log file when this returns (in the OS's hands: they
        survive a crash of this process); `sync()` then makes them survive a crash of the machine."""
        wb = WriteBatch(raw_mode=True)
        for topic, partition, base, records in batches:
            wb.put(_prefix(topic, partition) + _OFFSET.pack(base), records)
        self.db.write(wb, write_opt=self._sync if sync else self._unsynced)

    def sync(self) -> None:
        """Everything appended so far onto the disk (fsync of the write-ahead log)."""
        self.db.flush_wal(True)

    def remove(self, batches: list[tuple[str, int, int]]) -> None:
        """Take back entries the broker refused (never acknowledged)."""
        wb = WriteBatch(raw_mode=True)
        for topic, partition, base in batches:
            wb.delete(_prefix(topic, partition) + _OFFSET.pack(base))
        self.db.write(wb, write_opt=self._sync)

    def drop(self, topic: str) -> None:
        """A deleted topic: its partition count and every batch, synced."""
        wb = WriteBatch(raw_mode=True)
        wb.delete(_TOPIC + topic.encode())
        prefix = _prefix(topic)
        wb.delete_range(prefix, prefix[:-1] + b"\x01")
        self.db.write(wb, write_opt=self._sync)
        self.partitions.pop(topic, None)

    # ---- reading ------------------------------------------------------------------------------

    def end(self, topic: str, partition: int) -> int:
        """The offset the partition's next record gets: its last batch's base + count."""
        prefix = _prefix(topic, partition)
        for key, value in self.db.items(backwards=True, from_key=prefix + b"\xff" * 8):
            if key.startswith(prefix):
                return _OFFSET.unpack(key[len(prefix):])[0] + batch_count(value)
            break
        return 0

    def ends(self) -> dict[tuple[str, int], int]:
        return {(t, p): self.end(t, p) for t, n in self.partitions.items() for p in range(n)}

    def read(self, topic: str, partition: int, offset: int, end: int, max_bytes: int) -> list[bytes]:
        """The record batches a fetch at `offset` gets: the one holding `offset` and those after
        it, below `end`, up to `max_bytes` (the first one whole even if bigger, KIP-74), each
        with its base offset written in. One RocksDB seek (the batch with the largest base
        <= offset): a fetch costs the same on a long partition as on a short one."""
        prefix = _prefix(topic, partition)
        it = self.db.iter()
        it.seek_for_prev(prefix + _OFFSET.pack(offset))
        out: list[bytes] = []
        size = 0
        while it.valid():
            key = it.key()
            if not key.startswith(prefix):
                break
            base = _OFFSET.unpack_from(key, len(prefix))[0]
            if base >= end:
                break
            batch = it.value()
            if out and size + len(batch) > max_bytes:
                break
            out.append(at_offset(batch, base))
            size += len(batch)
            it.next()
        return out

    def batches(self, topic: str, partition: int) -> Iterator[tuple[int, bytes]]:
        """(base offset, record batch) of a partition in log order, checked: no gap, no overlap,
        no batch that fails its checksum (LogCopyError naming the first one)."""
        from aiokafka.record.default_records import DefaultRecordBatch

        prefix = _prefix(topic, partition)
        expected = 0
        try:
            for key, value in self.db.items(from_key=prefix):
                if not key.startswith(prefix):
                    break
                base = _OFFSET.unpack(key[len(prefix):])[0]
                if base != expected:
                    raise _damaged(self.path, f"{topic}[{partition}] jumps from offset {expected} to {base} "
                                              "(records missing)")
                if len(value) < 61 or not DefaultRecordBatch(value).validate_crc():
                    raise _damaged(self.path, f"{topic}[{partition}] offset {base}: the record batch fails its checksum")
                expected = base + batch_count(value)
                yield base, value
        except LogCopyError:
            raise
        except Exception as exc:  # RocksDB's own checksums (a truncated or altered file)
            raise _damaged(self.path, f"reading {topic}[{partition}]: {exc}") from exc

    def unregistered_topics(self) -> list[str]:
        """Topics with batches but no partition count (a damaged copy)."""
        found = []
        key = _BATCH
        while True:
            item = next(iter(self.db.items(from_key=key)), None)
            if item is None or not item[0].startswith(_BATCH):
                return found
            topic = item[0][1:item[0].index(b"\x00")].decode()
            if topic not in self.partitions:
                found.append(topic)
            key = _prefix(topic)[:-1] + b"\x01"

    def records_per_topic(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for (topic, _), end in self.ends().items():
            totals[topic] = totals.get(topic, 0) + end
        return totals


_OFFSET = struct.Struct(">Q")


def _sync_options() -> WriteOptions:
    w = WriteOptions()
    w.sync = True
    return w


def reset(data_dir: Path) -> Path | None:
    """Move the copy aside (to `log.moved-<n>`) and leave an empty one of this layout in place."""
    path = log_dir(data_dir)
    moved = None
    if path.exists():
        n = 1
        while (data_dir / f"{DIR}.moved-{n}").exists():
            n += 1
        moved = data_dir / f"{DIR}.moved-{n}"
        shutil.move(str(path), str(moved))
    path.parent.mkdir(parents=True, exist_ok=True)
    db = Rdict(str(path), _options())
    db.put(_LAYOUT_KEY, LAYOUT, write_opt=_sync_options())
    db.close()
    return moved


def _embedded_broker(data_dir: Path) -> bool:
    """Whether the stack of this data dir runs (or last ran) the embedded broker."""
    import msgspec

    try:
        record = msgspec.json.decode((data_dir / "stack.json").read_bytes())
    except (FileNotFoundError, msgspec.DecodeError):
        return (log_dir(data_dir) / "CURRENT").exists()
    return bool((record.get("embedded") or {}).get("broker"))


def describe(settings) -> dict:
    """Where the log is kept and its records per topic (`svc doctor`, `svc log show`)."""
    data_dir = settings.data_dir
    if not _embedded_broker(data_dir):
        if settings.kafka_bootstrap:
            return {"address": f"kafka {settings.kafka_bootstrap}", "ok": None,
                    "note": "kept by the external Kafka"}
        return {"address": None, "ok": False, "error": "no broker known (svc up not running, KAFKA_BOOTSTRAP unset)"}
    path = log_dir(data_dir.resolve())
    try:
        copy = LogCopy.open(data_dir, read_only=True)
    except LogCopyError as exc:
        return {"address": str(path), "ok": False, "error": str(exc)}
    try:
        records = dict(sorted(copy.records_per_topic().items()))
    finally:
        copy.close()
    return {"address": str(path), "ok": True, "total": sum(records.values()), "records": records}
