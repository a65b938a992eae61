"""The Wire socket, `/v1/wire`: many topics over one WebSocket.

Subprotocol `svc.v1`. Authenticate within 5 seconds with `{"op": "auth", "ticket": …}` (a `ws`
ticket, redeemed here), or offer the ticket as a second subprotocol `svc.ticket.{ticket}`, or
send `resume` instead. Then `subscribe`/`unsubscribe`/`list_subscriptions`, each answered by an
`ack` with the full topic set; each new topic gets its snapshot, then its deltas by seq, and a
`feed` whenever its expected latency or liveness changes from what the snapshot said. Pings
every 20 seconds; a `drain` 30 seconds before the 24-hour end, then close 4200 (resume); a
stopping process closes with 4201 (resume now, elsewhere). A reader too slow for its deltas
gets `warning` and close 4108.

One task per connection does all the sending (acks, snapshots, deltas, pings) so a topic's
snapshot always precedes its deltas; another only reads frames.
"""

# no `from __future__ import annotations`: Litestar reads the handlers' types at import time

import asyncio
import time
from dataclasses import replace
from datetime import timedelta

import structlog
from litestar import WebSocket, websocket
from litestar.exceptions import WebSocketDisconnect

from access.address import header_value
from api.access.middleware import service_for
from access.plans import PLANS
from api.conventions import RG_LINE
from api.front import SERVER_SEND
from api.problems import ProblemError
from infra.db import DATABASE_DOWN
from api.wire_serving import (
    DRAIN_NOTICE_SECONDS, WIRE_SCOPE, admit_attempt, count_in, count_out, delta_latency, fanout_of,
    feed_rechecks, live_connections, missed_deltas, owner_of, peek_kind, process_number, read_freshness, read_snapshot,
    redeem, still_open, topic_refusal, utc_now, wire_origins,
)
from wire import messages as m
from wire.fanout import FORBIDDEN, RESCOPED, REVOKED, STOPPING, Delta, DeltaFanout, Subscription
from wire.feed import FeedBook
from wire.recent import next_step
from wire.sessions import Session, SessionStore
from wire.topics import topic_error

log = structlog.get_logger("api.socket")


# a refused ticket closes the socket with the fatal code of its problem (do not retry unchanged)
_CLOSE_FOR = {"unauthenticated": m.CLOSE_UNAUTHENTICATED, "insufficient_scope": m.CLOSE_FORBIDDEN}


class _Closed(Exception):
    def __init__(self, code: int, reason: str = "", last: bytes | None = None) -> None:
        self.code, self.reason = code, reason
        self.last = last  # a message to try to send before the close frame


SLOW_WARNING = m.encode(m.WarningMessage(code="slow_consumer", detail="Deltas arrive faster than this connection "
                                                                       "reads them; past its send queue it closes."))
SLOW_CLOSING = m.encode(m.WarningMessage(code="slow_consumer", detail="This connection's send queue overflowed: "
                                                                       "closing (4108); resume with the session."))
ALARM_GRACE_SECONDS = 1.0  # the sender handles a close itself unless stuck writing this long
CLOSE_FLUSH_SECONDS = 5.0  # the last message and the close frame wait at most this long for a reader


def _closing(why: str | None) -> _Closed | None:
    """How a connection closes for a reason its inbox was given; None when it goes on."""
    if why == STOPPING:
        return _Closed(m.CLOSE_RESTART, "server stopping; reconnect now and resume")
    if why == REVOKED:
        return _Closed(m.CLOSE_UNAUTHENTICATED, "key revoked", m.encode(m.ErrorMessage(
            code="unauthenticated", detail="The key that opened this connection was revoked.")))
    if why == FORBIDDEN:
        return _Closed(m.CLOSE_FORBIDDEN, "key lacks wire:connect", m.encode(m.ErrorMessage(
            code="insufficient_scope", detail=f"The key that opened this connection lost '{WIRE_SCOPE}'.")))
    if why == "slow_consumer":
        return _Closed(m.CLOSE_SLOW_CONSUMER, "slow consumer", SLOW_CLOSING)
    return None


class Connection:
    def __init__(self, socket: WebSocket, fanout: DeltaFanout, session: Session, sessions: SessionStore,
                 counted) -> None:
        app_state = socket.app.state.app_state
        self.socket = socket
        self.settings = app_state.settings
        self.pool = app_state.pool
        self.fanout = fanout
        self.session = session
        self.sessions = sessions
        self.counted = counted  # (registry, connection ID): refreshed with every ping
        self.grant = session.grant
        self.inbox = fanout.new_inbox()  # its send queue
        self.subs: dict[str, Subscription] = {}
        self.current: dict[str, int] = {}  # topic -> last seq sent
        self.feeds = FeedBook()  # what each topic's expected latency and liveness were last said to be
        # what the read loop received, for the sender (woken by `inbox.poke`): a list, not a deque,
        # since it is nearly always empty (an empty list is 56 bytes, a deque 768) and short when not
        # (the inbound rate limit); popped from the front
        self.requests: list = []
        self.last_pong = time.monotonic()
        # the session's end on this process's monotonic clock
        self.ends = time.monotonic() + (session.expires_at - utc_now()).total_seconds()
        self.topic_limit = PLANS[self.grant.plan].wire_topics
        self._send = socket.scope.get(SERVER_SEND) or socket.send  # frames go straight to the server

    async def send(self, payload: bytes) -> None:
        await self._write({"type": "websocket.send", "bytes": None, "text": payload.decode()})

    async def send_delta(self, delta: Delta) -> None:
        """A delta's frame, the event made once per delta for every socket (`Delta.ws_event`)."""
        await self._write(delta.ws_event)

    async def _write(self, event: dict) -> None:
        """Every frame goes out here, timed in loop turns by the inbox: the server's send completes
        only once the frame is written to the socket (granian awaits the write; uvicorn waits for
        its buffer to drain), so a client that does not read holds it, and that, not the
        process's backlog, is what makes this connection slow (`Inbox.own`)."""
        inbox = self.inbox
        inbox.writing()
        try:
            await self._send(event)
        except WebSocketDisconnect:
            raise
        except Exception as exc:  # the server could not write it: the client is gone
            raise WebSocketDisconnect(detail=f"write failed: {exc!r}") from exc
        finally:
            inbox.written()

    async def hello(self) -> None:
        token = await self.sessions.new_token(self.session)
        await self.send(m.encode(m.Hello(
            session_id=self.session.session_id, resume_token=token,
            heartbeat_seconds=round(self.settings.wire_ping_seconds), resume_seconds=self.settings.wire_resume_seconds,
            expires_at=self.session.expires_at,
            limits=m.Limits(topics=self.topic_limit, inbound_per_second=m.INBOUND_PER_SECOND,
                            max_frame_bytes=m.MAX_FRAME_BYTES),
            mode=self.grant.mode, rg_line=RG_LINE,
        )))

    async def error(self, code: str, detail: str, topic: str | None = None, request_id: str | None = None,
                    retryable: bool = False) -> None:
        await self.send(m.encode(m.ErrorMessage(code=code, detail=detail, topic=topic, request_id=request_id,
                                                retryable=retryable)))

    # ---- topics -------------------------------------------------------------------------------

    def _attach(self, topic: str) -> Subscription:
        sub = self.subs.get(topic)
        if sub is None:
            sub = self.subs[topic] = self.fanout.subscribe(self.grant.mode, topic, self.inbox)
        return sub

    def _detach(self, topic: str) -> None:
        sub = self.subs.pop(topic, None)
        if sub is not None:
            self.fanout.unsubscribe(sub)
        self.current.pop(topic, None)
        self.feeds.forget(topic)

    async def snapshot(self, topic: str, request_id: str | None = None) -> bool:
        """Send the topic's snapshot (subscribed first, so no delta falls between)."""
        self._attach(topic)
        snap = await read_snapshot(self.pool, self.grant.mode, topic, owner_of(self.grant))
        if snap is None:
            self._detach(topic)
            await self.error("not_found", f"No topic {topic}.", topic=topic, request_id=request_id)
            return False
        self.current[topic] = snap.seq
        await self.send(snap.payload)
        self.feeds.watch(topic, snap.fresh, utc_now())
        return True

    def refusal(self, topic: str) -> tuple[str, str] | None:
        if (why := topic_error(topic)) is not None:
            return "invalid_request", f"Topic is not valid: {why}."
        if (refused := topic_refusal(self.grant, topic)) is not None:
            return "not_entitled", refused[1]
        return None

    async def subscribe(self, msg: m.Subscribe) -> None:
        if len(msg.topics) > m.MAX_TOPICS_PER_MESSAGE:
            await self.error("invalid_request", f"At most {m.MAX_TOPICS_PER_MESSAGE} topics per message.",
                             request_id=msg.request_id)
            return
        fresh, added = [], 0
        for topic in dict.fromkeys(msg.topics):
            if topic in self.current:
                fresh.append(topic)  # re-subscribing re-sends the snapshot
                continue
            refused = self.refusal(topic)
            if refused is not None:
                await self.error(*refused, topic=topic, request_id=msg.request_id)
            elif len(self.current) + added >= self.topic_limit:
                await self.error("too_many_topics", f"The {self.grant.plan} plan allows {self.topic_limit} topics.",
                                 topic=topic, request_id=msg.request_id)
            else:
                fresh.append(topic)
                added += 1
        sent = [topic for topic in fresh if await self.snapshot(topic, msg.request_id)]
        self.session.topics.update(sent)
        await self.sessions.save(self.session)
        await self.ack(msg.request_id)

    async def ack(self, request_id: str | None) -> None:
        await self.send(m.encode(m.Ack(request_id=request_id, topics=sorted(self.current))))

    async def resume_topics(self, last_seq: dict[str, int]) -> None:
        """Replay what each topic missed; topics this process cannot replay get new snapshots.
        A topic the key may no longer open (its scopes are read again on resume) is dropped with
        `not_entitled`."""
        refused = {topic: why for topic in self.session.topics if (why := topic_refusal(self.grant, topic))}
        for topic, why in sorted(refused.items()):
            self.session.topics.discard(topic)
            await self.error("not_entitled", why[1], topic=topic)
        topics = sorted(self.session.topics)
        for topic in topics:  # subscribed first: nothing falls between the replay and live deltas
            self._attach(topic)
        known = {topic: last_seq[topic] for topic in topics if topic in last_seq}
        missed = await missed_deltas(self.fanout, self.pool, self.grant.mode, known) if known else {}
        failed = []
        for topic in topics:
            if missed.get(topic) is None:
                failed.append(topic)
                continue
            self.current[topic] = known[topic]
            for delta in missed[topic]:
                await self.send_delta(delta)
                self.current[topic] = delta.seq
        resumed = [topic for topic in topics if topic not in failed]
        # what the client last heard of these topics' freshness is unknown here: say it now
        for topic, fresh in (await read_freshness(self.pool, self.grant.mode, resumed)).items():
            await self.send(m.encode(self.feeds.watch(topic, fresh, utc_now())))
        if failed:
            await self.send(m.encode(m.ResumeFailed(topics=failed)))
            for topic in failed:
                if not await self.snapshot(topic):
                    self.session.topics.discard(topic)
        if failed or refused:
            await self.sessions.save(self.session)

    # ---- the connection's two loops -------------------------------------------------------

    async def read_loop(self) -> None:
        inflow = m.Inflow()
        over = 0
        while True:
            frame = await self.socket.receive_data(mode="text")
            if len(frame.encode()) > m.MAX_FRAME_BYTES:
                raise _Closed(1009, "frame too large")
            if not inflow.admit(time.monotonic()):
                over += 1
                if over > m.INBOUND_PER_SECOND:
                    raise _Closed(m.CLOSE_TOO_MANY_MESSAGES, "too many messages")
                self.requests.append(("refuse", "rate_limited", f"At most {m.INBOUND_PER_SECOND} messages per second."))
            else:
                over = 0
                self.requests.append(("frame", frame))
            self.inbox.poke()

    async def handle(self, item) -> None:
        if item[0] == "refuse":
            await self.error(item[1], item[2], retryable=True)
            return
        try:
            msg = m.decode(item[1])
        except m.BadMessage as exc:
            await self.error("invalid_request", str(exc))
            return
        if isinstance(msg, m.Subscribe):
            await self.subscribe(msg)
        elif isinstance(msg, m.Unsubscribe):
            for topic in msg.topics:
                self._detach(topic)
                self.session.topics.discard(topic)
            await self.sessions.save(self.session)
            await self.ack(msg.request_id)
        elif isinstance(msg, m.ListSubscriptions):
            await self.ack(msg.request_id)
        elif isinstance(msg, m.Pong):
            self.last_pong = time.monotonic()
        elif isinstance(msg, m.Auth):  # in-band refresh: a new ticket of the same account
            try:
                grant = await redeem(self.pool, service_for(self.socket.scope), msg.ticket, "ws")
            except ProblemError as exc:
                await self.error(exc.code, exc.detail, request_id=msg.request_id)
                return
            if (grant.account_id, grant.mode, grant.kind) != (self.grant.account_id, self.grant.mode, self.grant.kind):
                await self.error("not_entitled", "A refresh ticket must be of the same account, mode and kind.",
                                 request_id=msg.request_id)
                return
            self.grant = self.session.grant = grant
            live_connections(self.socket.app.state.app_state).rekey(self.inbox, grant.key_id, grant.scopes)
            await self.sessions.save(self.session)
            await self.ack(msg.request_id)
        else:
            await self.error("invalid_request", "`resume` is only the first message of a connection.")

    async def send_loop(self) -> None:
        """Each turn: timers, then every request, then the deltas pending as the turn began, then
        sleep until the inbox is handed more (or a request arrives, or a timer is due). One
        wake-up per turn of the loop, however many deltas it brings, and no object per delta."""
        interval = self.settings.wire_ping_seconds
        next_ping = time.monotonic() + interval
        drained = False
        inbox, requests = self.inbox, self.requests
        while True:
            now = time.monotonic()
            if now >= self.ends:
                raise _Closed(m.CLOSE_LIFETIME, "connection lifetime reached; resume")
            if not drained and now >= self.ends - DRAIN_NOTICE_SECONDS:
                drained = True
                deadline = utc_now() + timedelta(seconds=self.ends - now)
                await self.send(m.encode(m.Drain(deadline_at=deadline)))
            if now >= next_ping:
                if now - self.last_pong > 2 * interval + 1:
                    raise _Closed(m.CLOSE_HEARTBEAT, "two pings unanswered")
                next_ping = now + interval
                await self.send(m.encode(m.Ping(ts=utc_now())))
                still_open(*self.counted)
            while requests:
                await self.handle(requests.pop(0))
            # what was pending as the turn began; what arrives while it is sent waits for the
            # next turn, so a sender behind on its deltas still pings and reads pongs
            for _ in range(inbox.count()):
                if not inbox.pending():  # started over meanwhile
                    break
                await self.deliver(inbox.take())
            for feed in await feed_rechecks(self.pool, self.grant.mode, self.feeds):
                await self.send(m.encode(feed))
            if requests or inbox.pending():
                continue  # arrived while sending
            limit = self.ends - (0 if drained else DRAIN_NOTICE_SECONDS)
            recheck_at = self.feeds.next_at()
            if recheck_at is not None:
                limit = min(limit, time.monotonic() + (recheck_at - utc_now()).total_seconds())
            await inbox.wait(max(0.0, min(next_ping, limit) - time.monotonic()))

    async def deliver(self, item: Delta | None) -> None:
        # a reason to start over always comes as a None item, ahead of any delta (`Inbox.start_over`)
        why = self.inbox.take_restart() if item is None else None
        if (closed := _closing(why)) is not None:
            raise closed
        if why == RESCOPED and self.inbox.scopes is not None:  # drop what the key may no longer read
            self.grant = self.session.grant = replace(self.grant, scopes=self.inbox.scopes)
            for topic in sorted(self.current):
                if (refused := topic_refusal(self.grant, topic)) is not None:
                    self._detach(topic)
                    self.session.topics.discard(topic)
                    await self.error("not_entitled", refused[1], topic=topic)
            await self.sessions.save(self.session)
        if why is not None:  # the fan-out reconnected: deltas may be missing, start each topic over
            for topic in list(self.current):
                await self.snapshot(topic)
            return
        if item is None:
            return
        delta, topic = item, item.topic
        current = self.current.get(topic)
        if current is None:
            return  # not subscribed (any more)
        if self.inbox.take_warning():  # ahead of what is waiting
            await self.send(SLOW_WARNING)
        step = next_step(current, delta.seq)
        if step == "send":
            self.current[topic] = delta.seq
            await self.send_delta(delta)
            feed = self.feeds.on_delta(topic, delta.source_ts, delta.source, utc_now(), delta_latency(topic, delta))
            if feed is not None:
                await self.send(m.encode(feed))
        elif step == "resnapshot":
            await self.snapshot(topic)

    async def watch(self) -> None:
        """What the send loop cannot do while it is stuck writing to a client that does not read
        (the server's and the kernel's buffers, a few MB, are full): close the connection when its
        inbox says so (send queue overflowed, key revoked, process stopping) or when two pings
        went unanswered."""
        interval = self.settings.wire_ping_seconds
        while True:
            try:
                # not wait_for: on 3.11 it loses a cancel that arrives as the alarm is set (the
                # sender took the same alarm and ended the connection in the same turn), and this
                # task then outlived its connection until two pings went unanswered
                async with asyncio.timeout(interval):
                    await self.inbox.alarm.wait()
            except TimeoutError:
                if time.monotonic() - self.last_pong > 3 * interval + 1:  # the sender checks at 2
                    raise _Closed(m.CLOSE_HEARTBEAT, "two pings unanswered") from None
                continue
            await asyncio.sleep(ALARM_GRACE_SECONDS)
            if (closed := _closing(self.inbox.restart)) is not None:  # the sender did not take it: stuck
                raise closed
            if not self.inbox.alarm.is_set():
                continue
            await asyncio.sleep(interval)  # a restart the stuck sender will take when it can

    def close(self) -> None:
        for topic in list(self.subs):
            sub = self.subs.pop(topic)
            self.fanout.unsubscribe(sub)


async def _first_message(socket: WebSocket, offered_ticket: str | None) -> m.Auth | m.Resume:
    if offered_ticket is not None:
        return m.Auth(ticket=offered_ticket)
    try:
        frame = await asyncio.wait_for(socket.receive_data(mode="text"), m.AUTH_SECONDS)
    except asyncio.TimeoutError:
        raise _Closed(m.CLOSE_AUTH_TIMEOUT, "no auth within 5 seconds") from None
    try:
        msg = m.decode(frame)
    except m.BadMessage:
        raise _Closed(m.CLOSE_PROTOCOL, "the first message is auth or resume") from None
    if not isinstance(msg, (m.Auth, m.Resume)):
        raise _Closed(m.CLOSE_PROTOCOL, "the first message is auth or resume")
    return msg


async def _close_quietly(socket: WebSocket, code: int, reason: str) -> None:
    try:  # a client that does not read may never take the close frame: bounded
        await asyncio.wait_for(socket.close(code=code, reason=reason), CLOSE_FLUSH_SECONDS)
    except Exception:  # already gone
        pass


async def _kind(app_state, service, ticket: str) -> str:
    """A ticket's kind, not using it; an unknown ticket (redeeming will refuse it) or an unreadable
    one counts as a key's."""
    try:
        return await peek_kind(app_state.pool, service, ticket) or "key"
    except ProblemError:
        return "key"


@websocket("/v1/wire", opt={"stream": True})
async def wire_socket(socket: WebSocket) -> None:
    offered = list(socket.scope.get("subprotocols") or [])
    ticket = next((p[len(m.TICKET_SUBPROTOCOL):] for p in offered if p.startswith(m.TICKET_SUBPROTOCOL)), None)
    app_state = socket.app.state.app_state
    service = service_for(socket.scope)
    origin = header_value(socket.scope, b"origin")
    origins = wire_origins(app_state.settings, socket.scope)  # the first-party page: the API's own origin
    # a browser from an origin no ticket (or not the offered ticket's kind) may be used from is
    # refused before the upgrade: HTTP 403, and the ticket stays unused
    if not origins.any_allows(origin) or (origin is not None and ticket is not None
                                          and not origins.allows(await _kind(app_state, service, ticket), origin)):
        await socket.close(code=m.CLOSE_ORIGIN, reason="origin not allowed")  # before accept: 403
        return
    await socket.accept(subprotocols=m.SUBPROTOCOL if m.SUBPROTOCOL in offered else None)
    resume_seconds = app_state.settings.wire_resume_seconds
    sessions = SessionStore(app_state.pool, service.secret, resume_seconds) if app_state.pool is not None else None
    address = service.address_of_scope(socket.scope)
    conn: Connection | None = None
    counted = None
    live = live_connections(app_state)
    try:
        if m.SUBPROTOCOL not in offered:
            raise _Closed(m.CLOSE_PROTOCOL, f"use subprotocol {m.SUBPROTOCOL}")
        try:
            await admit_attempt(service, address)
        except ProblemError as exc:
            await socket.send_data(m.encode(m.ErrorMessage(code=exc.code, detail=exc.detail, retryable=True)).decode())
            raise _Closed(m.CLOSE_TOO_MANY_MESSAGES, "too many connection attempts") from None
        first = await _first_message(socket, ticket)
        if sessions is None:
            raise _Closed(m.CLOSE_UNAVAILABLE, "no database")
        if isinstance(first, m.Resume):
            if origin is not None and not origins.allows(await sessions.kind_of(first.session_id) or "key", origin):
                raise _Closed(m.CLOSE_ORIGIN, "origin not allowed for this session")
            session = await sessions.resume(first.session_id, first.resume_token, await process_number(app_state))
            if session is None:
                await socket.send_data(m.encode(m.ResumeFailed(topics=sorted(first.last_seq))).decode())
                raise _Closed(m.CLOSE_SESSION_EXPIRED, "session expired")
        else:
            if origin is not None and not origins.allows(await _kind(app_state, service, first.ticket), origin):
                raise _Closed(m.CLOSE_ORIGIN, "origin not allowed for this ticket")
            try:
                grant = await redeem(app_state.pool, service, first.ticket, "ws")
            except ProblemError as exc:
                await socket.send_data(m.encode(m.ErrorMessage(code=exc.code, detail=exc.detail)).decode())
                raise _Closed(_CLOSE_FOR.get(exc.code, m.CLOSE_UNAVAILABLE), exc.code) from None
            session = await sessions.open(grant, app_state.settings.wire_max_seconds, await process_number(app_state))
        grant = session.grant
        try:
            counted = await count_in(app_state, address, grant)
        except ProblemError as exc:
            await socket.send_data(m.encode(m.ErrorMessage(code=exc.code, detail=exc.detail,
                                                           retryable=True)).decode())
            await sessions.detach(session)
            raise _Closed(m.CLOSE_TOO_MANY_MESSAGES if exc.code == "rate_limited" else m.CLOSE_UNAVAILABLE,
                          exc.code) from None
        try:
            fanout = await fanout_of(app_state)
        except ProblemError:
            await sessions.detach(session)
            raise _Closed(m.CLOSE_UNAVAILABLE, "live updates unavailable") from None
        # this frame lives as long as the connection: what only the opening needed goes now (the
        # origins' sets are built per connection, ~450 bytes)
        origins = None
        conn = Connection(socket, fanout, session, sessions, counted)
        # a stopping process closes it with 4201 (resume elsewhere); a revoked key with 4001
        live.enter(conn.inbox, grant.key_id, grant.scopes)
        await conn.hello()
        if isinstance(first, m.Resume):
            await conn.resume_topics(first.last_seq)
        tasks = [asyncio.create_task(conn.read_loop()), asyncio.create_task(conn.send_loop()),
                 asyncio.create_task(conn.watch())]
        done: set[asyncio.Task] = set()
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                task.result()  # raises what ended the connection
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            # raised here, a task's exception holds this frame (in its traceback) and this frame
            # the task: a cycle with the whole connection in it, which only the collector's rare
            # full pass frees (1,000 closed sockets kept ~50 KiB each until one ran). Let go
            del tasks, done, task
    except _Closed as closed:
        if closed.last is not None:
            try:
                await asyncio.wait_for(socket.send_data(closed.last.decode(), mode="text"), CLOSE_FLUSH_SECONDS)
            except Exception:  # gone, or not reading: the close code says it all
                pass
        await _close_quietly(socket, closed.code, closed.reason)
    except WebSocketDisconnect:
        pass
    except (ProblemError, *DATABASE_DOWN) as exc:  # read models or tickets unreachable: back off and retry
        log.warning("socket closed: service unavailable", error=repr(exc))
        await _close_quietly(socket, m.CLOSE_UNAVAILABLE, "service unavailable")
    except Exception:  # never leave a socket hanging on a bug; the log says what happened
        log.exception("socket closed on an unexpected error")
        await _close_quietly(socket, 1011, "internal error")
    finally:
        if conn is not None and sessions is not None:
            conn.close()
            try:
                await sessions.detach(conn.session)  # resumable for 120 s, on any process
            except Exception as exc:
                log.warning("socket session not detached", error=repr(exc))
        if counted is not None:
            count_out(*counted)
        if conn is not None:
            live.leave(conn.inbox)  # only now: a stopping process waits until the session is resumable


ROUTES = [wire_socket]
