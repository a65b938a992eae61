"""Problem objects (RFC 9457): the error catalog and how an error becomes a body.

Pure: no web framework here, so the Wire and the CLI can use the same catalog.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec

PROBLEM_MEDIA_TYPE = "application/problem+json"

# A value the client sent comes back in an error at most this long, so an error is never an
# amplifier (a 1.5 MB bad value must not come back as a 1.5 MB problem body).
ECHO_MAX = 200
# A whole `detail` (prose around at most a few echoed values) is bounded too, as a last resort
# for messages a library builds around a value it quotes whole.
DETAIL_MAX = 1000


def bounded(value: str, limit: int = ECHO_MAX) -> str:
    """`value` as it may be echoed: whole up to `limit` characters, else cut and marked."""
    if len(value) <= limit:
        return value
    return f"{value[:limit]}…(truncated, {len(value)} chars)"


@dataclass(frozen=True)
class Code:
    status: int
    title: str
    display: str
    retryable: bool = False


# the one error catalog; `display` is safe to show to a person
CATALOG: dict[str, Code] = {
    "invalid_request": Code(400, "Invalid request", "Something in this request is not valid."),
    "credential_in_url": Code(
        400, "Credential in URL",
        "A secret was sent in the address. Send keys only in the Authorization header, and rotate this key.",
    ),
    "unsupported_api_version": Code(400, "Unsupported API version", "This API version is not supported."),
    "unauthenticated": Code(401, "Unauthenticated", "The API key is missing or not valid."),
    "not_entitled": Code(403, "Not entitled", "Your plan does not include this."),
    "attestation_required": Code(403, "Attestation required", "An attestation is required first."),
    "insufficient_scope": Code(403, "Insufficient scope", "Your key does not allow this operation."),
    "too_many_topics": Code(403, "Too many topics", "Too many topics for your plan."),
    "not_found": Code(404, "Not found", "We could not find that."),
    "method_not_allowed": Code(405, "Method not allowed", "That method is not allowed here."),
    "idempotency_in_progress": Code(409, "Idempotency in progress", "The same request is still running.", True),
    "version_sunset": Code(410, "Version sunset", "This API version has been retired."),
    "answer_expired": Code(410, "Answer expired", "That answer has expired."),
    "operation_expired": Code(410, "Operation expired", "That operation has expired."),
    "precondition_failed": Code(412, "Precondition failed", "A precondition of this request failed."),
    "payload_too_large": Code(413, "Payload too large", "The request is too large."),
    # ours: RFC 9110's status for a body in a media type the route does not read
    "unsupported_media_type": Code(415, "Unsupported media type", "The request body must be sent as JSON."),
    "idempotency_key_reused": Code(422, "Idempotency key reused", "That idempotency key was used for another request."),
    "missing_execution_input": Code(422, "Missing execution input", "An input needed to run this is missing."),
    "invalid_inputs": Code(422, "Invalid inputs", "Some inputs are not valid for this calculation."),
    "not_stake_eligible": Code(422, "Not stake eligible", "This is not eligible for a stake."),
    "ref_not_allowed_in_batch": Code(422, "Reference not allowed in batch", "References are not allowed in a batch."),
    "formula_explain_only": Code(422, "Formula explain only", "This formula can only be explained, not run."),
    "calc_not_available": Code(422, "Calculation not available", "This calculation is not available."),
    "needs_jurisdiction": Code(422, "Needs jurisdiction", "A jurisdiction is needed."),
    "needs_operator": Code(422, "Needs operator", "An operator is needed."),
    "needs_league": Code(422, "Needs league", "A league is needed."),
    "rate_limited": Code(429, "Rate limited", "Too many requests. Please wait and try again.", True),
    "quota_exhausted": Code(429, "Quota exhausted", "The credit allowance for this period is used up."),
    "internal_error": Code(500, "Internal error", "Something went wrong on our side.", True),
    "upstream_error": Code(502, "Upstream error", "A service we depend on failed.", True),
    "service_unavailable": Code(503, "Service unavailable", "The service is unavailable. Please try again.", True),
    "upstream_timeout": Code(504, "Upstream timeout", "A service we depend on timed out.", True),
}

# Catalog codes no route raises yet, each with the feature it waits for (clients can handle them
# already; each has its help entry). Every other code is raised somewhere:
# tests/unit/test_problem_catalog.py scans the sources for both.
RESERVED: dict[str, str] = {
    "attestation_required": "attestations, whose conditions are not published",
    "version_sunset": "retiring an API version (the one version served is current)",
    "operation_expired": "stored operations fetched later",
    "precondition_failed": "conditional request headers",
    "ref_not_allowed_in_batch": "batch requests",
    "formula_explain_only": "formula cards that no calculation runs",
    "needs_operator": "answers that depend on one operator's house rules",
    "upstream_error": "calls to services outside this one (a failure)",
    "upstream_timeout": "calls to services outside this one (no answer in time)",
}

CODE_BY_STATUS = {400: "invalid_request", 401: "unauthenticated", 403: "not_entitled", 404: "not_found",
                  405: "method_not_allowed", 413: "payload_too_large",
                  415: "unsupported_media_type", 429: "rate_limited",
                  500: "internal_error", 502: "upstream_error", 503: "service_unavailable", 504: "upstream_timeout"}


class Problem(msgspec.Struct, kw_only=True):
    """The problem object every error answers with (all fields always present)."""

    type: str
    title: str
    status: int
    code: str
    detail: str
    param: str | None
    doc_url: str
    request_id: str
    retryable: bool
    display_message: str


@dataclass
class ProblemError(Exception):
    """Raise anywhere in a request to answer with a problem object."""

    code: str
    detail: str
    param: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    retryable: bool | None = None

    def __post_init__(self) -> None:
        if self.code not in CATALOG:
            raise ValueError(f"unknown problem code {self.code!r}")
        super().__init__(self.detail)

    @property
    def status(self) -> int:
        return CATALOG[self.code].status


def help_url(code: str) -> str:
    """The reference library's help entry for `code`, served by this service (relative to the
    API's base URL): content/reference/help/problem-<code>.md."""
    return f"/v1/reference/problem-{code.replace('_', '-')}"


def build_problem(
    code: str, detail: str, *, param: str | None, request_id: str, docs_url: str,
    retryable: bool | None = None,
) -> Problem:
    entry = CATALOG[code]
    return Problem(
        type=f"{docs_url}/problems/{code}",
        title=entry.title,
        status=entry.status,
        code=code,
        detail=bounded(detail, DETAIL_MAX),
        param=None if param is None else bounded(param),
        doc_url=help_url(code),
        request_id=request_id,
        retryable=entry.retryable if retryable is None else retryable,
        display_message=entry.display,
    )


def problem_example(code: str, detail: str, param: str | None = None) -> dict:
    """An example problem body, for OpenAPI."""
    return msgspec.to_builtins(
        build_problem(code, detail, param=param, request_id="req_0123456789abcdefghjk", docs_url="https://docs.svc.dev")
    )
