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
        return Rdict(str(self.path), Options(raw_mode=True))

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


__all__ = ["StateCache", "Watermark", "watermark", "cache_path"]
