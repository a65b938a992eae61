"""A feed record we could not turn into events, kept with the reason (topic feed.deadletter)."""

from __future__ import annotations

from datetime import datetime

import msgspec

from schemas import bounds
from schemas.bounds import bounded_raw, bounded_reason


class DeadLetter(msgspec.Struct, kw_only=True, frozen=True):
    source: str  # adapter name, such as nflverse-games
    file: str
    location: str  # "line 12" for CSV, a JSON path such as "$[3].bookmakers[2]" for JSON
    reason: str
    raw: str  # the record as read, verbatim up to bounds.RAW_MAX bytes (bytes not UTF-8 as \xff)
    ingest_ts: datetime


def make_dead_letter(*, source: str, file: str, location: str, reason: str, raw: str, ingest_ts: datetime) -> DeadLetter:
    """A dead letter of bounded size that can always be encoded: the raw record shows bytes
    that were not UTF-8 as \\xff escapes and is cut at `bounds.RAW_MAX` bytes; the reason is cut
    at `bounds.TEXT_MAX` characters."""
    return DeadLetter(source=source, file=bounds.visible(file)[: bounds.NAME_MAX * 5], location=bounded_reason(location),
                      reason=bounded_reason(reason), raw=bounded_raw(raw), ingest_ts=ingest_ts)


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(DeadLetter)


def encode_deadletter(record: DeadLetter) -> bytes:
    return _encoder.encode(record)


def decode_deadletter(raw: bytes) -> DeadLetter:
    return _decoder.decode(raw)
