"""The little of the Kafka wire protocol the log keeper needs, on aiokafka's protocol classes.

Frames are a 4-byte size then the body. A request body starts with api_key, api_version,
correlation_id (then the client ID, then the request); a response body with the correlation ID.
Produce requests up to v8 are not "flexible" (no tagged fields), which is all aiokafka (and
faust, on aiokafka) sends. Fetch: aiokafka (0.14, the only client here) sends the highest
version both sides know; tansu lists Fetch v0-v17 in its ApiVersions (passed through to the
client), aiokafka knows up to v11, so every fetch here is v11 (not flexible either: v12+ are).
"""

from __future__ import annotations

import asyncio
import struct
from dataclasses import dataclass
from io import BytesIO

from aiokafka.protocol import admin as _admin
from aiokafka.protocol import fetch as _fetch
from aiokafka.protocol import produce as _produce
from aiokafka.protocol.admin import CreateTopicsRequest_v0
from aiokafka.protocol.api import RequestStruct
from aiokafka.protocol.metadata import MetadataRequest_v1, MetadataRequest_v4

PRODUCE = 0
FETCH = 1
METADATA = 3
CREATE_TOPICS = 19
DELETE_TOPICS = 20
PRODUCE_VERSIONS = range(3, 9)  # record batches (magic 2), not flexible
FETCH_VERSIONS = (11,)  # what aiokafka sends to this broker (above); others pass through to tansu
OFFSET_OUT_OF_RANGE = 1
UNKNOWN_TOPIC_OR_PARTITION = 3
TOPIC_ALREADY_EXISTS = 36
MAX_FRAME = 256 << 20

_REQUESTS = {v: getattr(_produce, f"ProduceRequest_v{v}") for v in PRODUCE_VERSIONS}
_RESPONSES = {v: getattr(_produce, f"ProduceResponse_v{v}") for v in PRODUCE_VERSIONS}
_FETCHES = {v: getattr(_fetch, f"FetchRequest_v{v}") for v in FETCH_VERSIONS}
_DELETES = {v: getattr(_admin, f"DeleteTopicsRequest_v{v}") for v in range(0, 4)}
_HEAD = struct.Struct(">hhi")
# record batch (magic 2) header: base offset, length, leader epoch, magic, crc, attributes,
# last offset delta (https://kafka.apache.org/documentation/#recordbatch)
_BATCH_LENGTH = struct.Struct(">qi")
_LAST_OFFSET_DELTA = struct.Struct(">i")
_BASE_OFFSET = struct.Struct(">q")
BATCH_OVERHEAD = 12  # base offset and length come before the length's span


class ProtocolError(Exception):
    """Bytes that are not what the protocol allows here."""


async def read_frame(reader: asyncio.StreamReader) -> bytes:
    size = int.from_bytes(await reader.readexactly(4), "big", signed=True)
    if not 0 <= size <= MAX_FRAME:
        raise ProtocolError(f"frame of {size} bytes")
    return await reader.readexactly(size)


def frame(body: bytes) -> bytes:
    return len(body).to_bytes(4, "big") + body


def request_head(body: bytes) -> tuple[int, int, int]:
    """(api_key, api_version, correlation_id) of a request body."""
    return _HEAD.unpack_from(body)


def correlation_id(response: bytes) -> int:
    return int.from_bytes(response[:4], "big", signed=True)


def _after_request_header(body: bytes) -> int:
    """Offset of the request proper: after the 8-byte head and the client ID (nullable string)."""
    n = int.from_bytes(body[8:10], "big", signed=True)
    return 10 + max(n, 0)


def batch_spans(records: bytes) -> list[tuple[int, int, int]]:
    """(start, end, record count) of each record batch in a partition's records."""
    spans, at = [], 0
    while at < len(records):
        if len(records) - at < 61:
            raise ProtocolError("truncated record batch")
        _, length = _BATCH_LENGTH.unpack_from(records, at)
        end = at + BATCH_OVERHEAD + length
        if records[at + 16] != 2:
            raise ProtocolError(f"record batch of magic {records[at + 16]} (only 2 is kept)")
        if end > len(records):
            raise ProtocolError("truncated record batch")
        spans.append((at, end, batch_count(records, at)))
        at = end
    return spans


def batch_count(records: bytes, at: int = 0) -> int:
    return _LAST_OFFSET_DELTA.unpack_from(records, at + 23)[0] + 1


def at_offset(batch: bytes, base: int) -> bytes:
    """The record batch with `base` as its base offset (a producer sends 0; the broker's answer
    carries the offset it was given). The CRC does not cover the base offset (it starts at the
    attributes), so the batch stays valid."""
    return _BASE_OFFSET.pack(base) + batch[8:]


@dataclass(frozen=True)
class Produce:
    version: int
    acks: int
    # (topic, partition, records): records as sent, one or more record batches
    parts: list[tuple[str, int, bytes]]


def decode_produce(body: bytes) -> Produce:
    _, version, _ = request_head(body)
    cls = _REQUESTS.get(version)
    if cls is None:
        raise ProtocolError(f"produce v{version} (this broker keeps v{PRODUCE_VERSIONS.start}"
                            f"-v{PRODUCE_VERSIONS.stop - 1})")
    req = cls.decode(BytesIO(body[_after_request_header(body):]))
    parts = [(topic, partition, records or b"") for topic, partitions in req.topics
             for partition, records in partitions]
    return Produce(version, req.required_acks, parts)


def decode_produce_response(version: int, body: bytes) -> dict[tuple[str, int], tuple[int, int]]:
    """(topic, partition) -> (error code, base offset) of a produce response body."""
    resp = _RESPONSES[version].decode(BytesIO(body[4:]))
    return {(topic, part[0]): (part[1], part[2]) for topic, parts in resp.topics for part in parts}


@dataclass(frozen=True)
class Fetch:
    version: int
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    # (topic, [(partition, fetch offset, partition max bytes)]), in request order
    topics: list[tuple[str, list[tuple[int, int, int]]]]
    session: bool  # an incremental fetch session (KIP-227): aiokafka never opens one


def decode_fetch(body: bytes) -> Fetch:
    _, version, _ = request_head(body)
    req = _FETCHES[version].decode(BytesIO(body[_after_request_header(body):]))
    topics = [(topic, [(p[0], p[2], p[4]) for p in partitions]) for topic, partitions in req.topics]
    session = req.session_id != 0 or req.session_epoch != -1 or bool(req.forgotten_topics_data)
    return Fetch(version, req.max_wait_time, req.min_bytes, req.max_bytes, topics, session)


def fetch_response(corr: int, version: int, topics: list[tuple[str, list[tuple[int, int, int, bytes]]]]) -> bytes:
    """A fetch response body; topics: (topic, [(partition, error, high watermark, records)]).
    No transactions are used here: the last stable offset is the high watermark, no aborted
    transactions; the log starts at 0 (nothing is ever deleted from a kept partition)."""
    cls = _FETCHES[version].RESPONSE_TYPE
    parts = [(topic, [(p, error, hw, hw, 0 if error == 0 else -1, [], -1, records)
                      for p, error, hw, records in partitions]) for topic, partitions in topics]
    return corr.to_bytes(4, "big", signed=True) + cls(0, 0, 0, parts).encode()


def decode_delete_topics(body: bytes):
    """The DeleteTopics request (v0-v3) of a request body; its RESPONSE_TYPE decodes the answer."""
    _, version, _ = request_head(body)
    cls = _DELETES.get(version)
    if cls is None:
        raise ProtocolError(f"delete topics v{version} (this broker keeps v0-v3)")
    return cls.decode(BytesIO(body[_after_request_header(body):]))


def decode_delete_topics_response(request, body: bytes) -> dict[str, int]:
    """topic -> error code."""
    return dict(request.RESPONSE_TYPE.decode(BytesIO(body[4:])).topic_error_codes)


class Client:
    """One plain connection to a broker for requests of our own (restore, topic metadata)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self._next = 0
        self._lock = asyncio.Lock()

    @classmethod
    async def connect(cls, host: str, port: int) -> Client:
        return cls(*await asyncio.open_connection(host, port))

    async def close(self) -> None:
        self.writer.close()
        try:
            await self.writer.wait_closed()
        except OSError:
            pass

    async def send(self, request: RequestStruct) -> int:
        self._next += 1
        header = request.build_request_header(correlation_id=self._next, client_id="svc-log-keeper")
        self.writer.write(frame(header.encode() + request.encode()))
        await self.writer.drain()
        return self._next

    async def receive(self, request: RequestStruct, sent: int, timeout: float = 30.0):
        body = await asyncio.wait_for(read_frame(self.reader), timeout)
        if correlation_id(body) != sent:
            raise ProtocolError(f"response {correlation_id(body)} to request {sent}")
        return request.RESPONSE_TYPE.decode(BytesIO(body[4:]))

    async def request(self, request: RequestStruct, timeout: float = 30.0):
        # shielded: a caller cancelled mid-request (the keeper's fetch of a client that went
        # away) must not leave its answer unread, which the next request would take for its own
        return await asyncio.shield(self._request(request, timeout))

    async def _request(self, request: RequestStruct, timeout: float):
        async with self._lock:
            return await self.receive(request, await self.send(request), timeout)

    async def partition_count(self, topic: str, create: bool = True) -> int | None:
        """Partitions of a topic per the broker's metadata, None when it has no such topic;
        `create`: as a Metadata request v1 does, the broker may create a topic it lacks."""
        resp = await self.request(MetadataRequest_v1([topic]) if create else MetadataRequest_v4([topic], False))
        for error, name, _internal, partitions in resp.topics:
            if name == topic and error == 0:
                return len(partitions)
        return None

    async def create_topic(self, topic: str, partitions: int) -> None:
        resp = await self.request(CreateTopicsRequest_v0([(topic, partitions, 1, [], [])], 30_000))
        for name, error in resp.topic_errors:
            if error not in (0, TOPIC_ALREADY_EXISTS):
                raise ProtocolError(f"creating topic {name}: error {error}")


def produce_request(parts: list[tuple[str, int, bytes]], timeout_ms: int = 30_000) -> RequestStruct:
    """acks=all; parts: (topic, partition, one record batch)."""
    topics: dict[str, list[tuple[int, bytes]]] = {}
    for topic, partition, records in parts:
        topics.setdefault(topic, []).append((partition, records))
    return _REQUESTS[3](None, -1, timeout_ms, list(topics.items()))
