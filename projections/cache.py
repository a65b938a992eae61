"""The rocksdict cache of the projector's working state, under `<data_dir>/projector/<dataset>`.

Postgres is the truth. The cache holds the same state parts plus a watermark (schema, epoch,
generation, tracked offsets) written after each committed batch in one atomic write; at start
it is used only when its watermark equals what Postgres holds, else state is read from Postgres
and the cache rewritten. A crash between the Postgres commit and the cache write just means the
cache is behind and ignored.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Iterable

import msgspec
from rocksdict import Options, Rdict, WriteBatch

_META = b"meta"
# RocksDB's default memtable is 64 MiB, two of them while one flushes. Every committed batch
# rewrites the state of every key it touched, so the memtable fills with superseded versions of
# a state that is a few MiB on disk (a 1,000,000-event season: ~1.1 MiB per flushed file), and
# the projector's RSS climbed by up to ~64-128 MiB over a catch-up before the first flush
# (docs/benchmarks.md, issue 26 target 5). A small memtable flushes every few batches instead:
# at most MEMTABLE_BYTES x MEMTABLES of it in memory, whatever the length of the log.
MEMTABLE_BYTES = 4 << 20
MEMTABLES = 2
_pack = msgspec.msgpack.Encoder(decimal_format="string").encode


class Watermark(msgspec.Struct, frozen=True):
    schema: str
    epoch: str
    generation: int
    tracking: list[tuple[str, int, int]]  # sorted (topic, partition, last offset)


def watermark(schema: str, epoch: str, generation: int, tracking: dict[tuple[str, int], int]) -> Watermark:
    return Watermark(schema, epoch, generation, sorted((t, p, o) for (t, p), o in tracking.items()))


class StateCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = self._open()

    def _open(self) -> Rdict:
        options = Options(raw_mode=True)
        options.set_write_buffer_size(MEMTABLE_BYTES)
        options.set_max_write_buffer_number(MEMTABLES)
        return Rdict(str(self.path), options)

    def memtable_bytes(self) -> int:
        """Bytes the memtables hold now (active, unflushed and pinned)."""
        return self.db.property_int_value("rocksdb.size-all-mem-tables") or 0

    def watermark(self) -> Watermark | None:
        raw = self.db.get(_META)
        if raw is None:
            return None
        try:
            return msgspec.msgpack.decode(raw, type=Watermark)
        except msgspec.DecodeError:
            return None

    def load(self) -> tuple[list[tuple[str, bytes]], list[tuple[str, str, str, bytes]]]:
        parts, quotes = [], []
        for key, value in self.db.items():
            if key == _META:
                continue
            text = key.decode()
            if text.startswith("q:"):
                market_id, line, book = text[2:].split("|", 2)
                quotes.append((market_id, line, book, value))
            else:
                parts.append((text, value))
        return parts, quotes

    def write(self, parts: Iterable[tuple[str, bytes]], quotes: Iterable[tuple[str, Any]], mark: Watermark) -> None:
        """State parts, quotes (`lines.BookQuote` or its msgpack) and the watermark, atomically."""
        wb = WriteBatch(raw_mode=True)
        for key, value in parts:
            wb.put(key.encode(), value)
        for key, value in quotes:
            wb.put(key.encode(), value if isinstance(value, bytes) else _pack(value.stored()))
        wb.put(_META, msgspec.msgpack.encode(mark))
        self.db.write(wb)

    def replace_all(self, parts: Iterable[tuple[str, bytes]], quotes: Iterable[tuple[str, str, str, Any]],
                    mark: Watermark) -> None:
        """Start over from state read elsewhere (Postgres)."""
        self.db.close()
        shutil.rmtree(self.path, ignore_errors=True)
        self.db = self._open()
        self.write(parts, ((f"q:{m}|{k}|{b}", v) for m, k, b, v in quotes), mark)

    def close(self) -> None:
        self.db.close()


def cache_path(data_dir: Path, dataset: str) -> Path:
    return Path(data_dir) / "projector" / dataset


__all__ = ["MEMTABLE_BYTES", "MEMTABLES", "StateCache", "Watermark", "watermark", "cache_path"]
