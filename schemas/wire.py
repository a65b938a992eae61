"""Wire data envelopes: one shape for snapshots and deltas.

Deltas are produced by the projector onto the `wire.deltas` topic keyed by Wire topic
(`game:gm_…`, `market:mkt_…`); per Wire topic `seq` runs 1, 2, 3, ... across restarts and
rebuilds (docs/architecture.md, invariant 4).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

import msgspec

from schemas.answers import Answer
from domain.ids import id_regex
from schemas.read_models import LineData, MarketHeader  # a line and a market header: their one definitions

DeltaType = Literal["game.state", "market.update", "market.suspended", "answer.update"]


class Envelope(msgspec.Struct, kw_only=True, frozen=True):
    op: Literal["snapshot", "delta"]
    type: str
    topic: str
    seq: int
    source_ts: datetime | None
    emit_ts: datetime
    source: str
    data: dict[str, Any]


class ExpectedLatency(msgspec.Struct, kw_only=True, frozen=True):
    seconds: float | None  # the interval the topic's values are refreshed within; null once settled
    basis: str  # how `seconds` was arrived at: `refresh_interval`
    source: str


class Liveness(msgspec.Struct, kw_only=True, frozen=True):
    state: Literal["live", "stale", "settled"]
    as_of: datetime  # the newest change
    limit_seconds: float | None  # older than this is `stale`; null once settled


class SnapshotEnvelope(Envelope, kw_only=True, frozen=True):
    """A topic's state at its last seq (the stream's first event, and after any gap). `data` has
    the shape of the topic's delta data, with every line (docs/wire-deltas.md)."""

    op: Literal["snapshot"]
    expected_latency: ExpectedLatency
    liveness: Liveness
    rg_line: str | None  # the cost line, on every wagering (market) topic


# ---- `data` payloads per delta type (docs/wire-deltas.md; the AsyncAPI document is built from these)


class Score(msgspec.Struct, kw_only=True):
    home: int | None
    away: int | None


class GameStateData(msgspec.Struct, kw_only=True):
    """`game.state`: the game's full visible state after the change."""

    game_id: str
    status: str  # scheduled, live, final, postponed, cancelled, suspended, result_unknown (open; domain.game_status)
    score: Score | None
    period: str | None
    clock: str | None
    possession: str | None  # tm_ ID
    last_play: str | None
    kickoff_at: datetime | None
    kickoff_date: str | None  # YYYY-MM-DD, when the source gives no time
    venue: str | None


class MarketData(MarketHeader, kw_only=True):
    """`market.update` and `market.suspended`: the market header and the lines that changed."""

    # the Wire's names for two header members (redeclared, they keep their places in the header)
    id: str = msgspec.field(name="market_id")
    status_reason: str | None = msgspec.field(name="reason")
    lines: list[LineData]
    removed_lines: list[str]


DATA_BY_TYPE: dict[str, type[msgspec.Struct]] = {
    "game.state": GameStateData,
    "market.update": MarketData,
    "market.suspended": MarketData,
    "answer.update": Answer,  # a live answer re-derived: the new version, `supersedes` the one before
}

# The topic grammar of what is served: a topic is `{kind}:{ID}`, the ID that of the kind's
# resource (domain.ids), and each delta type belongs to one kind.
TOPIC_KINDS = ("game", "market", "answer")
KIND_OF_TYPE = {"game.state": "game", "market.update": "market", "market.suspended": "market",
                "answer.update": "answer"}


def topic_pattern(kind: str) -> str:
    """The regular expression of a served topic of `kind` (`^market:mkt_…$`)."""
    return f"^{kind}:{id_regex(kind)}$"


def game_topic(game_id: str) -> str:
    return f"game:{game_id}"


def market_topic(market_id: str) -> str:
    return f"market:{market_id}"


def answer_topic(answer_id: str) -> str:
    return f"answer:{answer_id}"


_encoder = msgspec.json.Encoder(decimal_format="string", order="deterministic")
_decoder = msgspec.json.Decoder(Envelope)


def encode_envelope(envelope: Envelope) -> bytes:
    return _encoder.encode(envelope)


def decode_envelope(raw: bytes) -> Envelope:
    return _decoder.decode(raw)
