"""Wire data envelopes (spec 6.1): one shape for snapshots and deltas.

Deltas are produced by the projector onto the `wire.deltas` topic keyed by Wire topic
(`game:gm_…`, `market:mkt_…`); per Wire topic `seq` runs 1, 2, 3, ... across restarts and
rebuilds (DESIGN.md invariant 4).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

import msgspec

DeltaType = Literal["game.state", "market.update", "market.suspended"]


class Envelope(msgspec.Struct, kw_only=True, frozen=True):
    op: Literal["snapshot", "delta"]
    type: str
    topic: str
    seq: int
    source_ts: datetime | None
    emit_ts: datetime
    source: str
    data: dict[str, Any]


def game_topic(game_id: str) -> str:
    return f"game:{game_id}"


def market_topic(market_id: str) -> str:
    return f"market:{market_id}"


_encoder = msgspec.json.Encoder(decimal_format="string", order="deterministic")
_decoder = msgspec.json.Decoder(Envelope)


def encode_envelope(envelope: Envelope) -> bytes:
    return _encoder.encode(envelope)


def decode_envelope(raw: bytes) -> Envelope:
    return _decoder.decode(raw)
