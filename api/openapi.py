"""OpenAPI helpers: document each route's problem responses with examples."""

from __future__ import annotations

from litestar.handlers import HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example
from litestar.plugins import ReceiveRoutePlugin
from litestar.routes import BaseRoute, HTTPRoute

from api.problems import CATALOG, Problem, problem_example
from api.request_checks import reads_body

# the errors every operation can answer with
COMMON_ERRORS = ("invalid_request", "credential_in_url", "unsupported_api_version", "internal_error")
# what every operation that reads a JSON body can also answer with (api.request_checks)
BODY_ERRORS = ("payload_too_large", "unsupported_media_type")


def problem_responses(*codes: str) -> dict[int, ResponseSpec]:
    """`responses=` for a handler: each status with its problem codes as examples."""
    by_status: dict[int, list[str]] = {}
    for code in dict.fromkeys((*COMMON_ERRORS, *codes)):
        by_status.setdefault(CATALOG[code].status, []).append(code)
    out: dict[int, ResponseSpec] = {}
    for status, status_codes in sorted(by_status.items()):
        out[status] = ResponseSpec(
            data_container=Problem,
            description="Problem: " + ", ".join(f"`{c}`" for c in status_codes),
            media_type="application/problem+json",
            examples=[
                Example(summary=c, value=problem_example(c, CATALOG[c].display)) for c in status_codes
            ],
        )
    return out


def documented_codes(spec: ResponseSpec | None) -> list[str]:
    return [e.summary for e in (spec.examples or []) if e.summary] if spec is not None else []


def add_problems(handler: HTTPRouteHandler, codes: tuple[str, ...] | list[str]) -> None:
    """Add problem codes to a handler's documented responses, keeping the codes it has."""
    responses = dict(handler.responses or {})
    for status, spec in problem_responses(*codes).items():
        if status not in {CATALOG[c].status for c in codes}:
            continue
        merged = dict.fromkeys([*documented_codes(responses.get(status)), *documented_codes(spec)])
        responses[status] = problem_responses(*merged)[status]
    # assigned, never mutated: the handler here is the app's copy, not the module-level original
    handler.responses = responses


class RequestChecksDocs(ReceiveRoutePlugin):
    """Documents on every route that reads a JSON body the body refusals of api.request_checks,
    so a route module need not list them."""

    def receive_route(self, route: BaseRoute) -> None:
        if isinstance(route, HTTPRoute):
            for handler in route.route_handlers:
                if handler.include_in_schema and reads_body(handler):
                    add_problems(handler, ("invalid_request", *BODY_ERRORS))
