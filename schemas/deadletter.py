"""A feed record we could not turn into events, kept with the reason (topic feed.deadletter)."""

from __future__ import annotations

from datetime import datetime

import msgspec


class DeadLetter(msgspec.Struct, kw_only=True, frozen=True):
    source: str  # adapter name, such as nflverse-games
    file: str
    location: str  # "line 12" for CSV, a JSON path such as "$[3].bookmakers[2]" for JSON
    reason: str
    raw: str  # the record as read, verbatim
    ingest_ts: datetime


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(DeadLetter)


def encode_deadletter(record: DeadLetter) -> bytes:
    return _encoder.encode(record)


def decode_deadletter(raw: bytes) -> DeadLetter:
    return _decoder.decode(raw)
