"""The Wire for a consumer: `client.wire.subscribe(topics)` yields one ordered, gapless stream
of typed events per topic whatever the network does.

It mints a ticket, opens the socket (subprotocol `svc.v1`), applies each topic's snapshot then
its deltas by seq, and:
- drops a duplicate (seq <= last), and on a gap (seq > last + 1) drops the topic's state and
  asks for a fresh snapshot (subscribing again re-sends it);
- answers pings; after a `drain` or any drop it reconnects and resumes with session ID, resume
  token and last seq per topic (to whichever API process answers at the base URL): missed deltas
  are replayed; topics the server lists in `resume_failed` get fresh snapshots;
- closes 4000-4099 are fatal (raised), except 4011 (session expired), which starts a new session
  with fresh snapshots; 4100-4199 back off (at least 1 s, exponential, jitter); others resume now.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Iterator
from datetime import datetime
from typing import Any

import msgspec
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from .errors import SvcError
from .fold import fold

SUBPROTOCOL = "svc.v1"
CLOSE_SESSION_EXPIRED = 4011
HELLO_SECONDS = 10.0  # a socket with no `hello` by then is given up on (dropped) and tried again


async def _send(ws: Any, message: dict[str, Any]) -> None:
    await ws.send(msgspec.json.encode(message).decode())  # a text frame: the Wire speaks JSON text


class WireEvent(msgspec.Struct, kw_only=True):
    """A snapshot or delta as applied: `state` is the topic's folded state after it."""

    op: str  # snapshot or delta
    type: str
    topic: str
    seq: int
    source: str | None = None
    source_ts: datetime | None = None
    emit_ts: datetime | None = None
    data: dict[str, Any] = {}
    state: dict[str, Any] = {}


class WireClosed(SvcError):
    """The server closed the socket with a fatal code (4000-4099): reconnecting unchanged fails."""

    def __init__(self, code: int, reason: str) -> None:
        self.code = code
        self.reason = reason
        super().__init__(f"wire closed {code}: {reason}")


class WireError(SvcError):
    """An `error` message about the whole subscription (a topic refused, for example)."""

    def __init__(self, message: dict[str, Any]) -> None:
        self.code = message.get("code")
        self.topic = message.get("topic")
        self.message = message
        super().__init__(f"wire error {self.code}: {message.get('detail')} ({self.topic})")


class Subscription:
    """Iterate it for events; `states` and `seqs` hold each topic's folded state and last seq."""

    def __init__(self, client: Any, topics: list[str], mode: str | None, max_backoff: float = 10.0,
                 connect_options: dict[str, Any] | None = None) -> None:
        self._client = client
        self._connect_options = dict(connect_options or {})
        self.topics = list(topics)
        self.mode = mode
        self.states: dict[str, dict[str, Any]] = {}
        self.seqs: dict[str, int] = {}
        self.session_id: str | None = None
        self.resume_token: str | None = None
        self.resumes = 0  # how many times the stream resumed (for tests and metrics)
        self.snapshots = 0
        self.warnings: list[dict[str, Any]] = []
        self.closes: list[int] = []  # each drop's close code (1006: no close frame), oldest first
        self._max_backoff = max_backoff
        self._ws: Any = None
        self._closed = False

    def _url(self) -> str:
        base = self._client._core.base_url
        return base.replace("https://", "wss://").replace("http://", "ws://") + "/v1/wire"

    async def _open(self) -> Any:
        if self.session_id and self.resume_token:
            first = {"op": "resume", "session_id": self.session_id, "resume_token": self.resume_token,
                     "last_seq": dict(self.seqs)}
            ws = await connect(self._url(), subprotocols=[SUBPROTOCOL], open_timeout=10, **self._connect_options)
            self.resumes += 1
        else:
            ticket = await self._client.wire_tickets.create(topics=self.topics, transport="ws", mode=self.mode)
            first = {"op": "auth", "ticket": ticket.ticket}
            ws = await connect(ticket.url, subprotocols=[SUBPROTOCOL], open_timeout=10, **self._connect_options)
            self.states.clear()
            self.seqs.clear()
        try:
            await _send(ws, first)
        except BaseException:
            ws.transport.abort()
            raise
        return ws

    async def _connected(self) -> Any:
        """A socket past its hello, reconnecting with backoff while the service is unreachable."""
        attempt = 0
        while True:
            ws = None
            try:
                ws = await self._open()
                hello = msgspec.json.decode(await asyncio.wait_for(ws.recv(), HELLO_SECONDS))
                if hello.get("op") != "hello":
                    raise ConnectionClosed(None, None)
                fresh = hello["session_id"] != self.session_id
                self.session_id, self.resume_token = hello["session_id"], hello["resume_token"]
                if fresh:
                    await _send(ws, ({"op": "subscribe", "topics": self.topics, "request_id": "sub"}))
                ready, ws = ws, None
                return ready
            except ConnectionClosed as closed:
                code = closed.rcvd.code if closed.rcvd else 1006
                self._on_close(code, closed.rcvd.reason if closed.rcvd else "")
            except (OSError, InvalidHandshake, InvalidStatus, asyncio.TimeoutError):
                pass
            finally:
                # a socket given up on (no hello in time, refused, a fatal close) is dropped at once:
                # left open it would still count against the address's and the plan's open sockets
                if ws is not None:
                    ws.transport.abort()
            await asyncio.sleep(min(self._max_backoff, 0.25 * 2**attempt) * random.uniform(0.5, 1.0))
            attempt += 1

    def _on_close(self, code: int, reason: str) -> bool:
        """After a close: True to back off first. Raises on fatal codes."""
        self.closes.append(code)
        if code == CLOSE_SESSION_EXPIRED:
            self.session_id = self.resume_token = None  # a new session, fresh snapshots
            return False
        if 4000 <= code <= 4099:
            raise WireClosed(code, reason)
        return 4100 <= code <= 4199

    async def __aiter__(self) -> AsyncIterator[WireEvent]:
        while not self._closed:
            self._ws = ws = await self._connected()
            back_off = False
            try:
                async for frame in ws:
                    message = msgspec.json.decode(frame)
                    op = message.get("op")
                    if op in ("snapshot", "delta"):
                        event = await self._apply(ws, message)
                        if event is not None:
                            yield event
                    elif op == "ping":
                        await _send(ws, ({"op": "pong", "ts": message["ts"]}))
                    elif op == "resume_failed":
                        for topic in message["topics"]:
                            self.states.pop(topic, None)
                            self.seqs.pop(topic, None)
                        await _send(ws, ({"op": "subscribe", "topics": message["topics"],
                                                           "request_id": "resnap"}))
                    elif op == "drain":
                        break  # reconnect now and resume before the server closes
                    elif op == "warning":
                        self.warnings.append(message)
                    elif op == "error" and not message.get("request_id") in ("resnap", "gap"):
                        raise WireError(message)
            except ConnectionClosed as closed:
                code = closed.rcvd.code if closed.rcvd else 1006
                back_off = self._on_close(code, closed.rcvd.reason if closed.rcvd else "")
            finally:
                await ws.close()
            if back_off:
                await asyncio.sleep(1.0 + random.uniform(0, 1.0))

    async def _apply(self, ws: Any, message: dict[str, Any]) -> WireEvent | None:
        topic, seq = message["topic"], message["seq"]
        if message["op"] == "snapshot":
            self.states[topic] = fold(None, message["type"], message["data"])
            self.seqs[topic] = seq
            self.snapshots += 1
        else:
            last = self.seqs.get(topic)
            if last is None or seq <= last:
                return None  # waiting for the topic's snapshot, or a duplicate
            if seq != last + 1:  # a gap: drop the state, a fresh snapshot follows
                self.states.pop(topic, None)
                self.seqs.pop(topic, None)
                await _send(ws, ({"op": "subscribe", "topics": [topic], "request_id": "gap"}))
                return None
            self.states[topic] = fold(self.states.get(topic), message["type"], message["data"])
            self.seqs[topic] = seq
        return WireEvent(op=message["op"], type=message["type"], topic=topic, seq=seq,
                         source=message.get("source"), source_ts=message.get("source_ts"),
                         emit_ts=message.get("emit_ts"), data=message["data"], state=self.states[topic])

    async def aclose(self) -> None:
        self._closed = True
        if self._ws is not None:
            await self._ws.close()


class AsyncWire:
    def __init__(self, client: Any) -> None:
        self._client = client

    def subscribe(self, topics: list[str], *, mode: str | None = None,
                  connect_options: dict[str, Any] | None = None) -> Subscription:
        """`connect_options`: more arguments for the socket's `websockets` connect (`local_addr`
        to pick the source address, `ssl`, `proxy`, ...)."""
        return Subscription(self._client, topics, mode, connect_options=connect_options)

    def stream(self, topic: str, *, mode: str | None = None) -> "TopicStream":
        """One topic over server-sent events, with the same guarantees."""
        return TopicStream(self._client, topic, mode)


class Wire:
    """The sync face: `for event in client.wire.subscribe(topics)` runs the async stream on an
    event loop of its own."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def subscribe(self, topics: list[str], *, mode: str | None = None,
                  connect_options: dict[str, Any] | None = None) -> Iterator[WireEvent]:
        from .clients import AsyncClient
        core = self._client._core
        loop = asyncio.new_event_loop()
        aclient = AsyncClient(core.base_url, core.api_key, api_version=core.api_version,
                              max_retries=core.max_retries, max_retry_wait=core.max_retry_wait)
        sub = Subscription(aclient, topics, mode, connect_options=connect_options)
        stream = sub.__aiter__()
        try:
            while True:
                try:
                    yield loop.run_until_complete(stream.__anext__())
                except StopAsyncIteration:
                    return
        finally:
            loop.run_until_complete(sub.aclose())
            loop.run_until_complete(aclient.aclose())
            loop.close()


class TopicStream:
    """One topic over server-sent events, for where a socket cannot be opened.

    Each connection needs a ticket (single-use) minted for `sse` and this topic; a dropped stream
    is reopened with a new ticket and `Last-Event-ID` (the last seq applied), so missed changes
    replay or a fresh snapshot comes first. A delta out of order reopens the same way.
    """

    def __init__(self, client: Any, topic: str, mode: str | None, max_backoff: float = 10.0) -> None:
        self._client = client
        self.topic = topic
        self.mode = mode
        self.state: dict[str, Any] | None = None
        self.seq: int | None = None
        self.reconnects = 0
        self.snapshots = 0
        self._max_backoff = max_backoff
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[WireEvent]:
        import httpx

        attempt = 0
        while not self._closed:
            try:
                ticket = await self._client.wire_tickets.create(topics=[self.topic], transport="sse", mode=self.mode)
                headers = {"Accept": "text/event-stream"}
                if self.seq is not None:
                    headers["Last-Event-ID"] = str(self.seq)
                timeout = httpx.Timeout(10.0, read=60.0)  # pings come every 20 s
                async with httpx.AsyncClient(timeout=timeout) as http:
                    async with http.stream("GET", ticket.url, params={"ticket": ticket.ticket}, headers=headers) as r:
                        if r.status_code >= 400:
                            await r.aread()
                            raise self._client._core.error(r)
                        attempt = 0
                        async for name, data in _sse_events(r.aiter_lines()):
                            if name == "error":
                                raise WireError(msgspec.json.decode(data))
                            if name in ("drain", "warning") or not data:
                                if name == "drain":
                                    break
                                continue
                            event = self._apply(msgspec.json.decode(data))
                            if event is False:
                                break  # out of order: reopen from the last seq
                            if event is not None:
                                yield event
            except (httpx.TransportError, OSError):
                pass
            except SvcError as exc:
                if getattr(exc, "status", 500) < 500 and getattr(exc, "code", None) != "rate_limited":
                    raise
            if self._closed:
                return
            self.reconnects += 1
            await asyncio.sleep(min(self._max_backoff, 0.25 * 2**attempt) * random.uniform(0.5, 1.0))
            attempt += 1

    def _apply(self, message: dict[str, Any]) -> WireEvent | None | bool:
        seq = message.get("seq")
        if message.get("op") not in ("snapshot", "delta") or not isinstance(seq, int):
            return None  # a `feed` notice or another event a client may ignore
        if message.get("op") == "snapshot":
            self.state, self.seq = fold(None, message["type"], message["data"]), seq
            self.snapshots += 1
        else:
            if self.seq is None or seq <= self.seq:
                return None
            if seq != self.seq + 1:
                return False
            self.state, self.seq = fold(self.state, message["type"], message["data"]), seq
        return WireEvent(op=message.get("op", "delta"), type=message["type"], topic=message["topic"], seq=seq,
                         source=message.get("source"), source_ts=message.get("source_ts"),
                         emit_ts=message.get("emit_ts"), data=message["data"], state=self.state)

    async def aclose(self) -> None:
        self._closed = True


async def _sse_events(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str, str]]:
    """(event name, data) per server-sent event; comments (pings) skipped."""
    name, data = "message", []
    async for line in lines:
        if line == "":
            if data or name != "message":
                yield name, "\n".join(data)
            name, data = "message", []
        elif line.startswith(":"):
            continue
        else:
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
