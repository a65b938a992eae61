"""OpenAPI helpers: document each route's problem responses with examples."""

from __future__ import annotations

from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example

from api.problems import CATALOG, Problem, problem_example

# the errors every operation can answer with (spec 4, 7.3)
COMMON_ERRORS = ("invalid_request", "credential_in_url", "unsupported_api_version", "internal_error")


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
