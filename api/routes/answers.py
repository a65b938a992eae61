"""POST /v1/answers (spec 2.11, 4.16, 6.3): a question in words, a sourced answer with figures.

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
`needs_jurisdiction` (`param: state`); league-aware questions 422 `needs_league`.

The question is never logged or stored: not in logs, tables, log topics, metrics or error
details. Price: 5 credits (docs/answers.md).
"""

# no `from __future__ import annotations`: Litestar reads the handlers' types at import time

from datetime import UTC, datetime
from typing import Annotated, AsyncIterator

import msgspec
import structlog
from litestar import Request, Response, post
from litestar.exceptions import ValidationException
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example
from litestar.params import Body
from litestar.response import Stream

from api.answers import engine
from api.answers.record import Answer, stream_events
from api.answers.understand import US_STATES
from api.conventions import request_id
from api.errors import body_validation_handler
from api.openapi import problem_responses
from api.problems import ProblemError, build_problem
from api.routes._db import read_models
from schemas.ids import RandomIds
from wire import sse

log = structlog.get_logger("api.answers")
PRICE = 5
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
    n = 0
    try:
        for name, data in stream_events(answer):
            n += 1
            yield sse.event(_encoder.encode(data), name=name, event_id=n)
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
            "method_not_allowed", "rate_limited", "quota_exhausted", "payload_too_large", "service_unavailable",
        ),
        201: ResponseSpec(data_container=Answer, description="The finished answer.", generate_examples=False,
                          examples=[Example(summary="The hold of two prices", value=answer_example())]),
        200: ResponseSpec(data_container=str, media_type="text/event-stream", generate_examples=False,
                          description="With `Accept: text/event-stream`: the answer as server-sent events (spec 6.3)."),
    },
    opt={"operation": "answers.create", "scope": "run:answers", "price": PRICE, "credential": "key"},
    operation_id="answers_create",
    tags=["answers"],
    exception_handlers={ValidationException: body_validation_handler()},
)
async def create_answer(
    request: Request,
    data: Annotated[AnswerRequest, Body(examples=[Example(summary="The hold of two prices", value=REQUEST_EXAMPLE)])],
) -> Response:
    state = _checked_state(data.state)
    if not data.question.strip():
        raise ProblemError("invalid_request", "`question` must contain something other than spaces.",
                           param="question")
    rid = request_id(request)
    ask = engine.Ask(question=data.question, state=state, answer_id=_answer_ids(), request_id=rid,
                     now=datetime.now(UTC), expires_at=None)
    try:
        async with read_models(request) as (conn, schema):
            answer = await engine.answer(conn, schema, ask)
    except engine.Refused as exc:
        raise ProblemError(exc.code, exc.detail, param=exc.param) from None
    except ProblemError:
        raise
    except Exception as exc:  # never let a message or traceback that might hold the question reach a log
        log.error("answer failed", error=type(exc).__name__, request_id=rid)
        raise ProblemError("internal_error", "The answer could not be made; it has been logged.") from None
    if _wants_stream(request):
        docs_url = request.app.state.settings.docs_url

        def problem():
            return build_problem("internal_error", "The answer stream failed.", param=None, request_id=rid,
                                 docs_url=docs_url)

        return Stream(_events(answer, problem), status_code=200, media_type="text/event-stream",
                      headers={"Cache-Control": "no-store"})
    return Response(answer, status_code=201, headers={"Cache-Control": "no-store"})


ROUTES = [create_answer]
