"""Control messages of the Wire socket. Pure: the shapes, decoding, close codes.

Clients send JSON objects with an `op`; unknown members are ignored, an unknown `op` is
answered with an `error` (`invalid_request`). Server messages are encoded from the Structs
below; data messages (snapshot, delta) are the envelopes of `schemas.wire`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal, Union

import msgspec

from schemas.wire import ExpectedLatency, Liveness

SUBPROTOCOL = "svc.v1"
TICKET_SUBPROTOCOL = "svc.ticket."  # a browser may offer the ticket as a second subprotocol
AUTH_SECONDS = 5
MAX_FRAME_BYTES = 65_536
INBOUND_PER_SECOND = 20
MAX_TOPICS_PER_MESSAGE = 5_000

# close codes: 4000-4099 fatal, 4100-4199 back off, 4200-4299 reconnect now and resume
CLOSE_UNAUTHENTICATED = 4001
CLOSE_AUTH_TIMEOUT = 4002
CLOSE_PROTOCOL = 4003
CLOSE_SESSION_EXPIRED = 4011  # the session expired during resume
CLOSE_ORIGIN = 4013  # a browser origin not allowed for the ticket's kind (wire.origins)
CLOSE_FORBIDDEN = 4030  # the key may no longer open the Wire (lacks `wire:connect`)
CLOSE_HEARTBEAT = 4100  # two pings unanswered
CLOSE_SLOW_CONSUMER = 4108  # the client reads too slowly (docs/wire-deltas.md)
CLOSE_TOO_MANY_MESSAGES = 4129
CLOSE_UNAVAILABLE = 4150  # live updates not reachable: back off and retry
CLOSE_LIFETIME = 4200  # the 24-hour limit: reconnect now and resume
CLOSE_RESTART = 4201  # this server is stopping: reconnect now (another process) and resume

# what each close code means, for clients (the AsyncAPI document lists these)
CLOSE_MEANINGS = {
    CLOSE_UNAUTHENTICATED: "unauthenticated (bad ticket)",
    CLOSE_AUTH_TIMEOUT: "no auth within 5 s",
    CLOSE_PROTOCOL: "protocol (no svc.v1 subprotocol, or a first message other than auth or resume)",
    CLOSE_SESSION_EXPIRED: "session expired during resume",
    CLOSE_ORIGIN: "origin not allowed for this ticket",
    CLOSE_FORBIDDEN: "the key lacks wire:connect",
    CLOSE_HEARTBEAT: "pings unanswered",
    CLOSE_SLOW_CONSUMER: "slow consumer",
    CLOSE_TOO_MANY_MESSAGES: "too many messages or attempts",
    CLOSE_UNAVAILABLE: "live updates unavailable",
    CLOSE_LIFETIME: "lifetime reached (resume)",
    CLOSE_RESTART: "this server is stopping (reconnect now and resume)",
    1009: "frame over 65,536 bytes",
}


class Auth(msgspec.Struct, tag_field="op", tag="auth"):
    ticket: str
    request_id: str | None = None


class Resume(msgspec.Struct, tag_field="op", tag="resume"):
    session_id: str
    resume_token: str
    last_seq: dict[str, int]


class Subscribe(msgspec.Struct, tag_field="op", tag="subscribe"):
    topics: list[str]
    request_id: str | None = None


class Unsubscribe(msgspec.Struct, tag_field="op", tag="unsubscribe"):
    topics: list[str]
    request_id: str | None = None


class ListSubscriptions(msgspec.Struct, tag_field="op", tag="list_subscriptions"):
    request_id: str | None = None


class Pong(msgspec.Struct, tag_field="op", tag="pong"):
    ts: str | None = None


ClientMessage = Union[Auth, Resume, Subscribe, Unsubscribe, ListSubscriptions, Pong]
_decode = msgspec.json.Decoder(ClientMessage).decode


class BadMessage(ValueError):
    """A frame that is not a client message; the text says why."""


def decode(frame: str | bytes) -> ClientMessage:
    try:
        return _decode(frame)
    except msgspec.ValidationError as exc:
        raise BadMessage(str(exc)) from None
    except msgspec.DecodeError:
        raise BadMessage("a frame is one JSON object with an `op`") from None


class Limits(msgspec.Struct, kw_only=True):
    topics: int
    inbound_per_second: int
    max_frame_bytes: int


class Hello(msgspec.Struct, kw_only=True, tag_field="op", tag="hello"):
    session_id: str
    resume_token: str
    heartbeat_seconds: int
    resume_seconds: int
    expires_at: datetime
    limits: Limits
    mode: Literal["live", "test"]
    rg_line: str


class Ack(msgspec.Struct, kw_only=True, tag_field="op", tag="ack"):
    request_id: str | None
    topics: list[str]


class ErrorMessage(msgspec.Struct, kw_only=True, tag_field="op", tag="error", omit_defaults=True):
    code: str
    detail: str | None = None
    topic: str | None = None
    request_id: str | None = None
    retryable: bool = False


class WarningMessage(msgspec.Struct, kw_only=True, tag_field="op", tag="warning"):
    code: Literal["slow_consumer"]
    detail: str | None


class Ping(msgspec.Struct, kw_only=True, tag_field="op", tag="ping"):
    ts: datetime


class Drain(msgspec.Struct, kw_only=True, tag_field="op", tag="drain"):
    deadline_at: datetime


class ResumeFailed(msgspec.Struct, kw_only=True, tag_field="op", tag="resume_failed"):
    topics: list[str]


class Feed(msgspec.Struct, kw_only=True, tag_field="op", tag="feed"):
    """A topic's expected latency or liveness changed from what its snapshot said (wire/feed.py)."""

    topic: str
    expected_latency: ExpectedLatency
    liveness: Liveness


ServerMessage = Union[Hello, Ack, ErrorMessage, WarningMessage, Ping, Drain, ResumeFailed, Feed]
encode = msgspec.json.Encoder().encode


class Inflow:
    """Inbound messages per second (a sliding second); `admit` says whether one more fits."""

    def __init__(self, per_second: int = INBOUND_PER_SECOND) -> None:
        self._per_second = per_second
        self._times: list[float] = []

    def admit(self, now: float) -> bool:
        self._times = [t for t in self._times if now - t < 1.0]
        if len(self._times) >= self._per_second:
            return False
        self._times.append(now)
        return True
