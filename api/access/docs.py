"""OpenAPI for access control, added to every metered operation in one place.

A Litestar plugin that sees each route as it is registered and, from the handler's `opt`,
documents the access problems it can answer with (401, 403 when it needs a scope, 429, 503)
and the rate-limit and credit headers of its responses. Route modules need do nothing.
"""

from __future__ import annotations

import dataclasses

from litestar.datastructures import ResponseHeader
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec
from litestar.plugins import ReceiveRoutePlugin
from litestar.routes import BaseRoute, HTTPRoute

from access.plans import KEY_ONLY_SCOPES, UNMETERED_OPERATIONS
from api.openapi import problem_responses

HEADERS = {
    "RateLimit-Policy": (
        'Quota policies (draft-ietf-httpapi-ratelimit-headers-10): the plan\'s rate window and its credit '
        'allowance, e.g. `"free";q=120;w=60, "free-credits";q=6000;w=2592000`.'
    ),
    "RateLimit": (
        "Service limits for those policies (draft-10): `r` remaining, `t` seconds until more is available, "
        'e.g. `"free";r=119;t=60, "free-credits";r=5999;t=86400`.'
    ),
    "X-RateLimit-Limit": "Calls the rate window admits.",
    "X-RateLimit-Remaining": "Calls left in the rate window after this one.",
    "X-RateLimit-Reset": "Unix seconds when the window admits another call.",
    "X-RateLimit-Resource": "What the window counts: the operation name (key-less) or `all` (accounts).",
    "X-Credits-Used": "Credits used this period, this call included.",
    "X-Credits-Remaining": "Credits left this period.",
    "X-Credits-Last": "Credits this call cost (only 2xx responses are charged).",
}
_REFUSAL_NOTE = (
    " A 429 carries `Retry-After` (seconds) and the RateLimit, RateLimit-Policy and X-RateLimit-* headers;"
    " `quota_exhausted` also carries X-Credits-* and is not retryable until the period resets."
)


def _documented_codes(spec: ResponseSpec | None) -> list[str]:
    return [e.summary for e in (spec.examples or []) if e.summary] if spec is not None else []


def access_codes(opt: dict) -> list[str]:
    """The access problems an operation can answer with."""
    codes = ["unauthenticated", "rate_limited", "service_unavailable"]
    if opt.get("scope") is not None:
        codes.append("insufficient_scope")
    if int(opt.get("price") or 0) > 0:
        codes.append("quota_exhausted")
    return codes


def document(handler: HTTPRouteHandler) -> None:
    operation = handler.opt.get("operation")
    if operation is None or operation in UNMETERED_OPERATIONS:
        return
    responses = dict(handler.responses or {})
    wanted = problem_responses(*access_codes(handler.opt))
    for status in (401, 403, 429, 503):
        if status not in wanted:
            continue
        codes = dict.fromkeys([*_documented_codes(responses.get(status)), *_documented_codes(wanted[status])])
        spec = problem_responses(*codes)[status]
        if status == 429:
            spec = dataclasses.replace(spec, description=spec.description + "." + _REFUSAL_NOTE)
        responses[status] = spec
    # assigned, never mutated: the handler here is the app's copy, not the module-level original
    handler.responses = responses
    kept = [h for h in (handler.response_headers or []) if h.name not in HEADERS]
    handler.response_headers = [
        *kept,
        *(ResponseHeader(name=n, value="", description=d, documentation_only=True) for n, d in HEADERS.items()),
    ]
    if not handler.security:
        # a bearer key, or (where an operation allows key-less calls) nothing
        keyed = handler.opt.get("credential") == "key" or handler.opt.get("scope") in KEY_ONLY_SCOPES
        handler.security = [{"bearer": []}] if keyed else [{}, {"bearer": []}]


class AccessDocs(ReceiveRoutePlugin):
    def receive_route(self, route: BaseRoute) -> None:
        if isinstance(route, HTTPRoute):
            for handler in route.route_handlers:
                document(handler)
