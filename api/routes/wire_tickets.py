"""POST /v1/wire/tickets: a single-use ticket to open the Wire, valid 60 s.

Needs a key with `wire:connect` (key-less callers get 401). Costs 1 credit, like a read: no
price for it is published and it answers `quota_exhausted`, so minting is metered.
`mode` picks the dataset the ticket serves: `test` (the sandbox) for any key, `live` only for a
live key (403 `not_entitled`, `param: mode`, for a test key); omitted, the key's own mode.
Topics must be well-formed; more than the plan's Wire topic limit (or 5000) is 403
`too_many_topics`. A topic needs the scope its REST twin needs (`read:odds` for `game:` and
`market:` topics): a key without it is refused 403 `insufficient_scope` naming the scope. Each
topic is checked again when it is opened (`not_entitled` on the socket).
"""

# no `from __future__ import annotations`: Litestar reads the handlers' types at import time

from datetime import datetime
from typing import Annotated, Literal
from urllib.parse import quote

import msgspec
from litestar import Request, Response, post
from litestar.exceptions import ValidationException
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example
from litestar.params import Body

from access.context import access_of
from api.access.middleware import service_for
from access.plans import PLANS, topic_scope
from api.errors import body_validation_handler
from api.openapi import problem_responses
from api.problems import ProblemError, bounded
from api.routes._db import read_models
from wire.tickets import mint_ticket
from wire.topics import distinct_topics, topic_error

MAX_TOPICS = 5000  # whatever the plan
SOCKET_PATH = "/v1/wire"
STREAM_PATH = "/v1/stream/{topic}"


class TicketRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    transport: Literal["ws", "sse"] = "ws"
    topics: list[str] | None = None
    mode: Literal["live", "test"] | None = None


class WireTicket(msgspec.Struct, kw_only=True):
    object: Literal["wire_ticket"]
    ticket: str  # shown once
    expires_at: datetime
    topics: list[str] | None  # null: any topic the plan allows
    transport: Literal["ws", "sse"]
    mode: Literal["live", "test"]
    url: str  # where to connect; never contains the ticket


REQUEST_EXAMPLE = {"transport": "ws", "topics": ["game:gm_8k3q2d7r1m4x9c6v5b0n", "market:mkt_2f7h3j9k1m5q8r4t6v0w"]}
RESPONSE_EXAMPLE = {
    "object": "wire_ticket", "ticket": "wtkt_5m1x8c3v7b2n9q4r6t0w", "expires_at": "2026-10-05T18:00:59Z",
    "topics": REQUEST_EXAMPLE["topics"], "transport": "ws", "mode": "live", "url": "wss://api.example.com/v1/wire",
}


def checked_topics(request: TicketRequest, plan: str, scopes: frozenset[str]) -> list[str] | None:
    """The ticket's topics, each once, or a problem naming what is wrong with them: a topic whose
    REST twin needs a scope the key lacks is 403 `insufficient_scope` naming that scope."""
    if request.topics is None:
        if request.transport == "sse":
            raise ProblemError("invalid_request", "An `sse` ticket names its topics.", param="topics")
        return None
    if not request.topics:
        raise ProblemError("invalid_request", "Name at least one topic, or omit `topics` on `ws` for any topic.",
                           param="topics")
    for i, topic in enumerate(request.topics):
        if (why := topic_error(topic)) is not None:
            raise ProblemError("invalid_request", f"Topic {bounded(topic)!r} is not valid: {why}.",
                               param=f"topics[{i}]")
    for topic in request.topics:
        scope = topic_scope(topic)
        if scope is not None and scope not in scopes:
            raise ProblemError("insufficient_scope", f"This key lacks the scope '{scope}' that {topic} needs.",
                               param=scope)
    topics = distinct_topics(request.topics)
    limit = min(MAX_TOPICS, PLANS[plan].wire_topics)
    if len(topics) > limit:
        raise ProblemError("too_many_topics", f"{len(topics)} topics named; the {plan} plan allows {limit} per ticket.",
                           param="topics")
    return topics


def ticket_url(base: str, transport: str, topics: list[str] | None) -> str:
    """The socket URL, or the stream URL with `{topic}` filled when exactly one topic is named."""
    base = base.rstrip("/")
    if transport == "ws":
        return base.replace("https://", "wss://", 1).replace("http://", "ws://", 1) + SOCKET_PATH
    if topics is not None and len(topics) == 1:
        return base + STREAM_PATH.replace("{topic}", quote(topics[0], safe=":/"))
    return base + STREAM_PATH


@post(
    "/v1/wire/tickets",
    status_code=201,
    summary="Mint a Wire ticket",
    description=__doc__.split("\n", 2)[2],
    responses={
        **problem_responses(
            "unauthenticated", "insufficient_scope", "not_entitled", "too_many_topics", "method_not_allowed",
            "rate_limited", "quota_exhausted", "payload_too_large", "service_unavailable",
        ),
        201: ResponseSpec(data_container=WireTicket, description="The ticket, shown once; never cached.",
                          examples=[Example(summary="A socket ticket for two topics", value=RESPONSE_EXAMPLE)]),
    },
    opt={"operation": "wire.tickets", "scope": "wire:connect", "price": 1, "credential": "key"},
    tags=["wire"],
    request_max_body_size=2_000_000,  # 5000 topics of 200 characters fit; more is 413
    exception_handlers={ValidationException: body_validation_handler()},
)
async def create_wire_ticket(
    request: Request,
    data: Annotated[TicketRequest, Body(examples=[Example(summary="A socket ticket for two topics", value=REQUEST_EXAMPLE)])],
) -> Response[WireTicket]:
    access = access_of(request)
    if access is None or access.caller.key_id is None or access.caller.account_id is None:
        raise RuntimeError("POST /v1/wire/tickets needs the access middleware and a key")
    caller = access.caller
    if data.mode == "live" and caller.mode == "test":
        raise ProblemError("not_entitled", "A test-mode key reaches only the sandbox: ask for `mode: test` or omit it.",
                           param="mode")
    topics = checked_topics(data, caller.plan, caller.scopes)
    mode = data.mode or caller.mode
    async with read_models(request) as (conn, _):
        ticket, grant = await mint_ticket(
            conn, service_for(request.scope).secret, key_id=caller.key_id, account_id=caller.account_id,
            plan=caller.plan, mode=mode, transport=data.transport, topics=topics,
        )
    base = request.app.state.settings.public_url or str(request.base_url)
    body = WireTicket(
        object="wire_ticket", ticket=ticket, expires_at=grant.expires_at, topics=topics,
        transport=data.transport, mode=mode, url=ticket_url(base, data.transport, topics),
    )
    return Response(body, status_code=201, headers={"Cache-Control": "no-store"})


ROUTES = [create_wire_ticket]
