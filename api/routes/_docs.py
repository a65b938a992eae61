"""OpenAPI pieces shared by the read routes: the error set of a read operation and a 200 with an example."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example

from api.openapi import problem_responses

# the errors a read operation answers with
READ_ERRORS = (
    "invalid_request", "credential_in_url", "unsupported_api_version", "unauthenticated", "method_not_allowed",
    "rate_limited", "internal_error", "service_unavailable", "quota_exhausted", "insufficient_scope", "not_entitled",
)


def responses(container: type, description: str, example: Any, *extra_errors: str) -> dict[int, ResponseSpec]:
    """The 200 response with a worked example, and every problem response with its codes."""
    return {
        200: ResponseSpec(
            data_container=container, description=description,
            examples=[Example(summary="Example", value=msgspec.to_builtins(example))],
        ),
        **problem_responses(*READ_ERRORS, *extra_errors),
    }
