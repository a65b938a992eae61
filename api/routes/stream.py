"""GET /v1/stream/{topic}: one Wire topic as server-sent events.

Opened with an `sse` wire ticket (query `ticket`, the one credential a URL may carry, or
`Authorization: Bearer wtkt_…`), redeemed here: a ticket opens one stream. First
`event: snapshot` (the topic's state at its last seq), then one event per delta named by its
type, each `id` the topic's seq, each data line one Wire envelope. `Last-Event-ID` (or the
`last_event_id` query parameter, for clients that cannot set headers; the header wins) within
120 seconds replays what was missed instead of a snapshot; a gap, a slow reader or a lost broker
connection is answered with a fresh snapshot.

The spent ticket then names the stream: within 120 seconds of the stream dropping, the same URL
reopens it (a browser's EventSource reconnects so, with `Last-Event-ID`), for that topic only,
while the key stands; later, mint a new ticket. Browsers get CORS headers from the origins their
ticket's kind allows (`SVC_WIRE_ORIGINS`); an `Origin` not allowed is refused (403
`not_entitled`, `param: Origin`) before the ticket is used. `event: feed` says when the topic's expected
latency or liveness changed from what the snapshot said (a quiet topic turned stale, a stale one
live again, a final game and its markets settled). A comment pings every 20 seconds;
`event: drain` comes 30 seconds before the stream's 24-hour end.

Topics: `game:gm_…` and `market:mkt_…` (scope `read:odds`), and `answer:ans_…` (scope
`run:answers`, only the account and key mode that asked): a live answer's newest version, then an
`answer.update` delta each time it is re-derived with something new, superseding the one before.
"""

# no `from __future__ import annotations`: Litestar reads the handlers' types at import time

import time
from contextlib import aclosing
from dataclasses import replace
from datetime import timedelta
from typing import Annotated, AsyncIterator

from litestar import Request, get
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import HeaderParameter, PathParameter, QueryParameter
from litestar.response import Stream

from access.keys import bearer_token
from access.address import header_value
from api.access.middleware import service_for
from api.openapi import problem_responses
from api.problems import ProblemError, bounded
from api.wire_serving import (
    DRAIN_NOTICE_SECONDS, SERVED_KINDS, WIRE_SCOPE, Snapshot, admit_attempt, count_in, count_out, delta_latency,
    detach_later, encode, fanout_of, feed_rechecks, live_connections, log, missed_deltas, owner_of, peek_kind,
    process_number, read_snapshot, redeem, still_open, topic_refusal, utc_now, wire_origins,
)
from wire import sse
from wire.messages import Feed
from wire.fanout import FORBIDDEN, RESCOPED, REVOKED, STOPPING, Delta, DeltaFanout, Subscription
from wire.feed import FeedBook
from wire.sessions import Session, SessionStore
from wire.tickets import TicketGrant
from wire.recent import next_step
from wire.topics import topic_error



def _problem_event(code: str, detail: str) -> bytes:
    return sse.event(encode({"code": code, "detail": detail}), name="error")


def _feed_event(feed: Feed) -> bytes:
    return sse.event(encode(feed), name="feed")


async def _events(
    request: Request, fanout: DeltaFanout, sub: Subscription, first: Snapshot,
    resumed: tuple[int, list[Delta]] | None, counted, grant: TicketGrant, sessions: SessionStore, session: Session,
) -> AsyncIterator[bytes]:
    settings = request.app.state.settings
    # the stream's 24 hours count from its first opening, whatever reconnects came since
    ends = time.monotonic() + (session.expires_at - utc_now()).total_seconds()
    drain_at = ends - DRAIN_NOTICE_SECONDS
    drained = False
    pool = request.app.state.app_state.pool
    live = live_connections(request.app.state.app_state)
    # a stopping process ends the stream with a drain (reconnect, Last-Event-ID); a revoked key with an error
    live.enter(sub.inbox, grant.key_id, grant.scopes)
    feeds = FeedBook()  # what the topic's expected latency and liveness were last said to be
    try:
        if resumed is None:
            current = first.seq
            yield sse.event(first.payload, name="snapshot", event_id=first.seq)
            feeds.watch(sub.topic, first.fresh, utc_now())
        else:  # the deltas after the client's last seq (possibly none yet), then live ones
            current, missed = resumed
            for delta in missed:
                yield delta.sse_event
                current = delta.seq
            # what the client last heard of the topic's freshness is unknown here: say it now
            yield _feed_event(feeds.watch(sub.topic, first.fresh, utc_now()))
        next_ping = time.monotonic() + settings.wire_ping_seconds
        while True:
            now = time.monotonic()
            if now >= ends:
                return
            if not drained and now >= drain_at:
                drained = True
                deadline = utc_now() + timedelta(seconds=ends - now)
                yield sse.event(encode({"deadline_at": deadline}), name="drain")
            if now >= next_ping:
                next_ping = now + settings.wire_ping_seconds
                yield sse.comment("ping")
                still_open(*counted)
            until = min(next_ping, ends if drained else drain_at)
            recheck_at = feeds.next_at()
            if recheck_at is not None:
                until = min(until, time.monotonic() + (recheck_at - utc_now()).total_seconds())
            await sub.inbox.wait(max(0.0, until - time.monotonic()))
            if not sub.inbox.pending():  # timed out
                for feed in await feed_rechecks(pool, sub.dataset, feeds):
                    yield _feed_event(feed)
                continue
            delta = sub.inbox.take()
            why = sub.inbox.take_restart()
            if delta is not None and why is None:
                if sub.inbox.take_warning():  # ahead of what is waiting
                    yield sse.event(encode({"code": "slow_consumer", "detail": "Deltas arrive faster than this "
                                            "stream is read; past its send queue a fresh snapshot replaces them."}),
                                    name="warning")
                step = next_step(current, delta.seq)
                if step == "skip":
                    continue
                if step == "send":
                    yield delta.sse_event
                    current = delta.seq
                    feed = feeds.on_delta(sub.topic, delta.source_ts, delta.source, utc_now(),
                                          delta_latency(sub.topic, delta))
                    if feed is not None:
                        yield _feed_event(feed)
                    continue
                why = "gap"
            elif why is None:
                continue
            if why == STOPPING:
                yield sse.event(encode({"deadline_at": utc_now()}), name="drain")
                return
            if why == REVOKED:
                yield _problem_event("unauthenticated", "The key that opened this stream was revoked.")
                return
            if why == FORBIDDEN:
                yield _problem_event("insufficient_scope", f"The key that opened this stream lost '{WIRE_SCOPE}'.")
                return
            if why == RESCOPED and sub.inbox.scopes is not None:
                refused = topic_refusal(replace(grant, scopes=sub.inbox.scopes), sub.topic)
                if refused is not None:
                    yield _problem_event("insufficient_scope" if refused[0] else "not_entitled", refused[1])
                    return
            if why == "slow_consumer":
                yield sse.event(encode({"code": "slow_consumer", "detail": "The stream fell behind; a fresh "
                                                                          "snapshot follows."}), name="warning")
            try:
                snapshot = await read_snapshot(pool, sub.dataset, sub.topic, owner_of(grant))
            except ProblemError as exc:  # read_snapshot says service_unavailable for a database failure
                log.warning("stream ended: snapshot unavailable", topic=sub.topic, error=repr(exc))
                yield _problem_event("service_unavailable", "The read models are not reachable right now; "
                                                            "reconnect shortly.")
                return
            if snapshot is None:
                yield _problem_event("not_found", f"The topic {sub.topic} is no longer available.")
                return
            current = snapshot.seq
            yield sse.event(snapshot.payload, name="snapshot", event_id=snapshot.seq)
            feeds.watch(sub.topic, snapshot.fresh, utc_now())
    finally:
        fanout.unsubscribe(sub)
        count_out(*counted)
        detach_later(sessions, session)  # the same URL reopens it for 120 s
        live.leave(sub.inbox)


async def _written(inbox, events: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """The stream's events, each write to the client timed by its inbox (`Inbox.writing`): the
    response resumes this generator once it has sent what it yielded, so a client that does not
    read holds the stream here, and that, not the process's backlog, makes it slow."""
    async with aclosing(events):  # closed with this one: its `finally` counts the stream out
        async for chunk in events:
            inbox.writing()
            try:
                yield chunk
            finally:
                inbox.written()


_LAST_EVENT_ID_PATTERN = r"^[0-9]{1,18}$"


async def _grant(app_state, service, sessions: SessionStore, token: str, topic: str, origin: str | None):
    """The grant a stream opens with and its session: a fresh ticket's (redeemed now, a new
    session) or, for a spent one, the session of the stream it opened (the reconnect of a browser's
    EventSource). The origin is checked against the ticket's kind before the ticket is used."""
    kind = await peek_kind(app_state.pool, service, token)
    if kind is None:
        kind = await sessions.stream_kind(token)
    if origin is not None and not wire_origins(app_state.settings).allows(kind or "key", origin):
        raise ProblemError("not_entitled", "This ticket may not be used from this page's origin.", param="Origin")
    process = await process_number(app_state)
    try:
        grant = await redeem(app_state.pool, service, token, "sse")
    except ProblemError as exc:
        if exc.code != "unauthenticated":
            raise
        session = await sessions.resume_stream(token, process)
        if session is None:
            raise ProblemError("unauthenticated", "The ticket is not valid: unknown, expired, minted for the socket, "
                                                  "or its stream dropped over 120 s ago (mint a new one).",
                               param="ticket") from None
        try:
            _check(session.grant, topic, session.topics)
        except ProblemError:
            detach_later(sessions, session)
            raise
        return session.grant, session
    _check(grant, topic, None)
    grant = replace(grant, topics=(topic,))  # the stream's session is this topic's alone
    return grant, await sessions.open(grant, app_state.settings.wire_max_seconds, process, stream_ticket=token)


def _check(grant: TicketGrant, topic: str, stream_topics: set[str] | None) -> None:
    """Refuse a stream this grant may not open (a reopened one: only its own topic)."""
    if stream_topics is not None and topic not in stream_topics:
        raise ProblemError("not_entitled", "A spent ticket reopens only the stream it opened.", param="topic")
    if WIRE_SCOPE not in grant.scopes:
        raise ProblemError("insufficient_scope", f"The key lacks the scope '{WIRE_SCOPE}'.", param=WIRE_SCOPE)
    if (refused := topic_refusal(grant, topic)) is not None:
        scope, detail = refused
        if scope is None:
            raise ProblemError("not_entitled", detail, param="topic")
        raise ProblemError("insufficient_scope", detail, param=scope)  # as its REST twin answers


@get(
    "/v1/stream/{topic:path}",
    summary="One Wire topic as server-sent events",
    description=__doc__.split("\n", 2)[2],
    media_type="text/event-stream",
    responses={
        **problem_responses("unauthenticated", "insufficient_scope", "not_entitled", "not_found", "rate_limited",
                             "service_unavailable"),
        200: ResponseSpec(data_container=str, media_type="text/event-stream",
                          description="`event: snapshot`, then one event per delta (`id` = seq); `: ping` "
                                      "comments; `event: feed`, `event: drain`, `event: warning`, `event: error`."),
    },
    tags=["wire"],
    opt={"stream": True},  # not a metered operation: the ticket that opens it was
)
async def stream_topic(
    request: Request,
    topic: Annotated[str, PathParameter(description="A Wire topic: `game:gm_…`, `market:mkt_…` or "
                                                     "`answer:ans_…` (at most 200 characters).")],
    ticket: Annotated[str | None, QueryParameter(max_length=64, description="An `sse` wire ticket; once spent, it "
                                                 "reopens its stream for 120 s after a drop.")] = None,
    last_event_id: Annotated[
        str | None, HeaderParameter(name="Last-Event-ID", max_length=32, description="The last seq seen, to resume.")
    ] = None,
    last_event_id_query: Annotated[
        str | None, QueryParameter(name="last_event_id", pattern=_LAST_EVENT_ID_PATTERN,
                                   description="The last seq seen, for clients that cannot set headers; "
                                               "`Last-Event-ID` wins when both are sent.")
    ] = None,
) -> Stream:
    topic = topic.lstrip("/")
    if (why := topic_error(topic)) is not None:
        raise ProblemError("invalid_request", f"Topic {bounded(topic)!r} is not valid: {why}.", param="topic")
    token = ticket or bearer_token(header_value(request.scope, b"authorization"))
    if token is None:
        raise ProblemError("unauthenticated", "Open a stream with a wire ticket: POST /v1/wire/tickets "
                                              "(transport sse), then pass it as `ticket`.", param="ticket")
    service = service_for(request.scope)
    address = service.address_of_scope(request.scope)
    await admit_attempt(service, address)
    app_state = request.app.state.app_state
    if app_state.pool is None:
        raise ProblemError("service_unavailable", "Wire tickets are not reachable right now; retry shortly.")
    sessions = SessionStore(app_state.pool, service.secret, app_state.settings.wire_resume_seconds)
    grant, session = await _grant(app_state, service, sessions, token, topic,
                                  header_value(request.scope, b"origin"))
    try:
        if topic.partition(":")[0] not in SERVED_KINDS:
            raise ProblemError("not_found", f"No topic {topic}: streams serve game:, market: and answer: topics.",
                               param="topic")
        counted = await count_in(app_state, address, grant)
    except BaseException:
        detach_later(sessions, session)
        raise
    try:
        fanout = await fanout_of(app_state)
        sub = fanout.subscribe(grant.mode, topic)  # before the snapshot: nothing falls between
        try:
            first = await read_snapshot(app_state.pool, grant.mode, topic, owner_of(grant))
            if first is None:
                raise ProblemError("not_found", f"No topic {topic}.", param="topic")
            last = sse.last_event_id(last_event_id if last_event_id is not None else last_event_id_query)
            missed = None if last is None else (await missed_deltas(fanout, app_state.pool, grant.mode,
                                                                    {topic: last}))[topic]
            resumed = None if missed is None else (last, missed)
        except BaseException:
            fanout.unsubscribe(sub)
            raise
    except BaseException:
        count_out(*counted)
        detach_later(sessions, session)
        raise
    return Stream(
        _written(sub.inbox, _events(request, fanout, sub, first, resumed, counted, grant, sessions, session)),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


ROUTES = [stream_topic]
