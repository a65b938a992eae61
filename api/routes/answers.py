"""POST /v1/answers: a question in words, a sourced answer with figures.

Needs a key with `run:answers` (key-less callers get 401, a key without the scope 403
`insufficient_scope`). Without `Accept: text/event-stream`: 201 with the finished Answer. With
it: 200 and the events `answer.started`, `answer.citation` (each before the first sentence that
uses it), one `answer.delta` per sentence and `answer.completed`, ids from 1; a failure after the
start ends the stream with `event: error` carrying a problem object. Both carry the same answer.

Every sentence is composed from templates over values the engine computed (no generative model):
conversions, payouts and margin removal by the odds maths, consensus and no-vig from the market
read models, games, players and library entries from theirs. Predictions, picks, advice,
per-book or non-public data and anything off sports and betting maths get a polite refusal
(`tier: refusal`, a `refusal` object, no figures). Law and tax questions without a state are 422
`needs_jurisdiction` (`param: state`); league-aware questions are 403 `not_entitled` (`param:
read:league`) for a key without `read:league`, else 422 `needs_league` (leagues are not served yet).

The question is never logged or stored: not in logs, tables, log topics, metrics or error
details. `Idempotency-Key`: a retry with the same key and body gets the first answer again
(`Idempotent-Replayed: true`); the same key with another body is 422 `idempotency_key_reused`, a
retry while the first runs 409 `idempotency_in_progress`. The finished answer (never its question)
is kept a day: `GET /v1/answers/{answer_id}` returns it to the key's account, then 410
`answer_expired`. Price: 5 credits an answer, 1 to read one back (docs/answers.md).
"""

# no `from __future__ import annotations`: Litestar reads the handlers' types at import time

from datetime import UTC, datetime
from typing import Annotated, AsyncIterator

import msgspec
import structlog
from litestar import Request, Response, get, post
from litestar.exceptions import ValidationException
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example
from litestar.params import Body, HeaderParameter, PathParameter
from litestar.response import Stream

from access.context import access_of
from api import idempotency
from api.access.middleware import service_for
from api.answers import engine, live, store
from schemas.answers import Answer, stream_events
from api.answers.understand import US_STATES
from api.conventions import dataset_of, request_id
from api.errors import body_validation_handler
from api.openapi import problem_responses
from api.problems import ProblemError, build_problem
from api.routes._db import read_models
from domain.ids import ID_PATTERNS, RandomIds
from wire import sse

log = structlog.get_logger("api.answers")
PRICE = 5
READ_PRICE = 1
_answer_ids = RandomIds("answer")
_encoder = msgspec.json.Encoder()


class AnswerRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    question: Annotated[str, msgspec.Meta(min_length=1, max_length=1000, description="The question, 1 to 1000 characters.")]
    state: Annotated[
        str, msgspec.Meta(pattern="^[A-Za-z]{2}$", description="Two letters, a US state: its helpline and law entry.")
    ] | None = None
    end_user_id: Annotated[
        str, msgspec.Meta(min_length=1, max_length=64, description="Your own opaque user ID; grants nothing.")
    ] | None = None


REQUEST_EXAMPLE = {"question": "What is the hold on -110 / -110?", "state": "NJ"}


def answer_example() -> dict:
    """A real answer, composed by the engine at a fixed time (the calculation categories need no
    database): the documented example is what the route returns."""
    from api.answers import compose, compute, helplines, understand

    at = datetime(2026, 10, 5, 18, 0, tzinfo=UTC)
    facts = compute.no_vig(understand.read(REQUEST_EXAMPLE["question"]), at)
    answer = compose.compose(facts, answer_id="ans_8k3q2d7r1m4x9c6v5b0n", created_at=at,
                             rg_line=helplines.rg_line("NJ"), help_links=helplines.help_links("NJ", {"us-nj-sports-betting"}),
                             request_id="req_5m1x8c3v7b2n9q4r6t0w", expires_at=None)
    return msgspec.to_builtins(answer)


def _checked_state(state: str | None) -> str | None:
    if state is None:
        return None
    code = state.upper()
    if code not in US_STATES:
        raise ProblemError("invalid_request", "`state` must be the two-letter code of a US state (or DC, PR).",
                           param="state")
    return code


def _wants_stream(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    return "text/event-stream" in accept.lower()


async def _events(answer: Answer, problem_for) -> AsyncIterator[bytes]:
    """`answer.started` as its own chunk, then the rest in one: the answer is whole before the
    stream opens, so its events need not wait on one another."""
    n = 0
    try:
        events = stream_events(answer)
        name, data = events[0]
        n = 1
        yield sse.event(_encoder.encode(data), name=name, event_id=1)
        rest = []
        for name, data in events[1:]:
            n += 1
            rest.append(sse.event(_encoder.encode(data), name=name, event_id=n))
        yield b"".join(rest)
    except Exception as exc:  # after the start: the stream ends with a problem object
        log.error("answer stream failed", error=type(exc).__name__)
        yield sse.event(_encoder.encode(problem_for()), name="error", event_id=n + 1)


@post(
    "/v1/answers",
    status_code=201,
    summary="Answer a question in words",
    description=__doc__.split("\n", 2)[2],
    responses={
        **problem_responses(
            "unauthenticated", "insufficient_scope", "not_entitled", "needs_jurisdiction", "needs_league",
            "idempotency_key_reused", "idempotency_in_progress",
            "method_not_allowed", "rate_limited", "quota_exhausted", "payload_too_large", "service_unavailable",
        ),
        201: ResponseSpec(data_container=Answer, description="The finished answer.", generate_examples=False,
                          examples=[Example(summary="The hold of two prices", value=answer_example())]),
        200: ResponseSpec(data_container=str, media_type="text/event-stream", generate_examples=False,
                          description="With `Accept: text/event-stream`: the answer as server-sent events."),
    },
    opt={"operation": "answers.create", "scope": "run:answers", "price": PRICE, "credential": "key"},
    operation_id="answers_create",
    tags=["answers"],
    exception_handlers={ValidationException: body_validation_handler()},
)
async def create_answer(
    request: Request,
    data: Annotated[AnswerRequest, Body(examples=[Example(summary="The hold of two prices", value=REQUEST_EXAMPLE)])],
    idempotency_key: Annotated[str | None, HeaderParameter(
        name=idempotency.HEADER, max_length=255, required=False,
        description="Any unique string (1 to 255 visible ASCII): a retry with the same key and body gets the first answer.",
    )] = None,
) -> Response:
    state = _checked_state(data.state)
    if not data.question.strip():
        raise ProblemError("invalid_request", "`question` must contain something other than spaces.",
                           param="question")
    key = idempotency.check_key(idempotency_key)
    subject = _subject(request)
    rid = request_id(request)
    if key is not None:
        # keyed with the service's secret: the kept fingerprint cannot be matched against guessed questions
        digest = idempotency.fingerprint(service_for(request.scope).secret, msgspec.json.encode(data, order="deterministic"))
        async with read_models(request) as (conn, _):
            stored = await idempotency.begin(conn, subject, key, "answers.create", digest)
        if stored is not None:
            replayed = msgspec.json.decode(stored.body, type=Answer)
            return _respond(request, replayed, stored.body, rid, {"Idempotent-Replayed": "true"})
    now = datetime.now(UTC)
    ask = engine.Ask(question=data.question, state=state, answer_id=_answer_ids(), request_id=rid, now=now,
                     expires_at=now + store.TTL)
    try:
        async with read_models(request) as (conn, schema):
            answer, basis = await engine.answer_and_basis(conn, schema, ask)
            body = _encoder.encode(answer)
            # a live answer keeps what re-derives it (never the question): its Wire topic (api.answers.live)
            await store.keep(conn, answer.answer_id, subject, body, ask.expires_at,  # type: ignore[arg-type]
                             dataset_of(request) if basis else None, live.basis_bytes(basis))
            if key is not None:
                await idempotency.finish(conn, subject, key, 201, body)
    except BaseException as exc:
        if key is not None:
            async with read_models(request) as (conn, _):
                await idempotency.forget(conn, subject, key)
        if isinstance(exc, engine.Refused):
            if exc.code == "needs_league" and "read:league" not in _scopes(request):
                raise ProblemError("not_entitled", "League-aware answers need the league owner's OAuth token with "
                                   "`read:league`; this key does not hold it.", param="read:league") from None
            raise ProblemError(exc.code, exc.detail, param=exc.param) from None
        if isinstance(exc, (ProblemError, GeneratorExit, KeyboardInterrupt, SystemExit)):
            raise
        # never let a message or traceback that might hold the question reach a log
        log.error("answer failed", error=type(exc).__name__, request_id=rid)
        raise ProblemError("internal_error", "The answer could not be made; it has been logged.") from None
    return _respond(request, answer, body, rid, {})


def _scopes(request: Request) -> frozenset[str]:
    access = access_of(request)
    return access.caller.scopes if access is not None else frozenset()


def _subject(request: Request) -> str:
    access = access_of(request)
    if access is None:
        raise RuntimeError("the answers routes need the access middleware")
    return f"{access.caller.mode}:{access.caller.subject}"


def _respond(request: Request, answer: Answer, body: bytes, rid: str, headers: dict[str, str]) -> Response:
    headers = {"Cache-Control": "no-store", **headers}
    if _wants_stream(request):
        docs_url = request.app.state.settings.docs_url

        def problem():
            return build_problem("internal_error", "The answer stream failed.", param=None, request_id=rid,
                                 docs_url=docs_url)

        return Stream(_events(answer, problem), status_code=200, media_type="text/event-stream", headers=headers)
    return Response(body, status_code=201, media_type="application/json", headers=headers)


@get(
    "/v1/answers/{answer_id:str}",
    summary="Read a finished answer again",
    description=(
        "The answer as it was served, for a day after it was made, to the account (and key mode) that asked; "
        "never its question. Later: 410 `answer_expired` for a week, then 404 `not_found`; another account's "
        "answer is 404 too. Needs `run:answers`."
    ),
    responses={
        200: ResponseSpec(data_container=Answer, description="The answer.", generate_examples=False),
        **problem_responses("unauthenticated", "insufficient_scope", "not_found", "answer_expired", "rate_limited",
                            "quota_exhausted", "service_unavailable"),
    },
    opt={"operation": "answers.get", "scope": "run:answers", "price": READ_PRICE, "credential": "key"},
    operation_id="answers_get",
    tags=["answers"],
)
async def get_answer(
    request: Request,
    answer_id: Annotated[str, PathParameter(pattern=ID_PATTERNS["answer"].pattern, description="`ans_` ID.")],
) -> Response:
    async with read_models(request) as (conn, _):
        kept = await store.read(conn, answer_id, _subject(request))
    if kept is None:
        raise ProblemError("not_found", f"No answer {answer_id} of yours is kept.", param="answer_id")
    if kept.body is None:
        raise ProblemError("answer_expired", f"Answer {answer_id} expired at {kept.expires_at.isoformat()}; ask again.",
                           param="answer_id")
    return Response(kept.body, status_code=200, media_type="application/json", headers={"Cache-Control": "no-store"})


ROUTES = [create_answer, get_answer]
