"""Every error the app raises becomes a problem object with a catalog code; never a bare 500."""

from __future__ import annotations

import re

import msgspec
import structlog
from litestar import Request, Response
from litestar.exceptions import HTTPException, MethodNotAllowedException, NotFoundException, ValidationException

from access.headers import www_authenticate
from access.keys import bearer_token
from api.conventions import request_id
from api.problems import CODE_BY_STATUS, ECHO_MAX, PROBLEM_MEDIA_TYPE, ProblemError, bounded, build_problem

log = structlog.get_logger("api.errors")
_JSON_PATH = re.compile(r"at `\$\.([A-Za-z0-9_\.\[\]]+)`")
_MISSING = re.compile(r"^Missing required \w+ parameter '([^']+)'")
# a value the validator quotes whole in its message (`Invalid enum value 'xxx…'`)
_LONG_QUOTED = re.compile(rf"'([^']{{{ECHO_MAX + 1},}})'|`([^`]{{{ECHO_MAX + 1},}})`")


def bounded_message(message: str) -> str:
    """A validator's message with every long value it quotes cut to ECHO_MAX and marked."""
    if len(message) <= ECHO_MAX:
        return message
    return _LONG_QUOTED.sub(
        lambda m: f"'{bounded(m.group(1))}'" if m.group(1) is not None else f"`{bounded(m.group(2))}`", message
    )


def docs_url_of(request: Request) -> str:
    return request.app.state.settings.docs_url


def problem_response(
    request: Request, code: str, detail: str, param: str | None = None,
    headers: dict[str, str] | None = None, retryable: bool | None = None,
) -> Response:
    problem = build_problem(
        code, detail, param=param, request_id=request_id(request), docs_url=docs_url_of(request),
        retryable=retryable,
    )
    headers = dict(headers or {})
    if not any(k.lower() == "www-authenticate" for k in headers):
        challenge = www_authenticate(code, param, _credential_sent(request))
        if challenge is not None:
            headers["WWW-Authenticate"] = challenge
    return Response(
        content=msgspec.json.encode(problem),
        status_code=problem.status,
        media_type=PROBLEM_MEDIA_TYPE,
        headers=headers,
    )


def _credential_sent(request: Request) -> bool:
    """Whether the request carried a credential: a bearer key, or a stream's ticket."""
    # another scheme (Basic) counts as none (RFC 6750 3.1)
    return bearer_token(request.headers.get("authorization")) is not None or "ticket" in request.query_params


def _on_problem(request: Request, exc: ProblemError) -> Response:
    return problem_response(request, exc.code, exc.detail, exc.param, exc.headers, exc.retryable)


def validation_param(exc: ValidationException) -> tuple[str | None, str]:
    """The offending field and a readable message from Litestar's validation detail."""
    extra = exc.extra if isinstance(exc.extra, list) else []
    for item in extra:
        if isinstance(item, dict):
            key = item.get("key")
            message = str(item.get("message", exc.detail))
            if key == "body" or key is None:
                match = _JSON_PATH.search(message)
                key = match.group(1) if match else ("body" if key == "body" else None)
            return key, message
    missing = _MISSING.match(str(exc.detail))  # a missing required parameter names itself
    return (missing.group(1) if missing else None), str(exc.detail)


def _wire_name(request: Request, param: str | None) -> str | None:
    """The name the client sent: a parameter declared as `x: Annotated[..., QueryParameter(name="from")]`
    is reported by Litestar under its Python name `x`."""
    handler = request.scope.get("route_handler")
    field = getattr(getattr(handler, "parsed_fn_signature", None), "parameters", {}).get(param) if param else None
    return getattr(getattr(field, "kwarg_definition", None), "name", None) or param


def _on_validation(request: Request, exc: ValidationException) -> Response:
    param, message = validation_param(exc)
    param = _wire_name(request, param)
    message = bounded_message(message)
    detail = f"Invalid value for '{bounded(param)}': {message}" if param else message
    return problem_response(request, "invalid_request", detail, param)


_NAMED_FIELD = re.compile(r"(?:unknown|missing required) field `([^`]+)`")


def body_validation_handler(pattern_hint: str | None = None):
    """A route's handler for JSON body errors: as the app's, but an unknown or missing field is
    named itself (`legs[0].zzz`), not its parent; a pattern break is said as `pattern_hint`."""

    def on_body_validation(request: Request, exc: ValidationException) -> Response:
        param, message = validation_param(exc)
        if pattern_hint and "matching regex" in message:  # the pattern is for machines; say it in words
            message = pattern_hint
        named = _NAMED_FIELD.search(message)
        if named:
            param = named.group(1) if param in (None, "data", "body") else f"{param}.{named.group(1)}"
        message = bounded_message(message)
        detail = f"Invalid value for '{bounded(param)}': {message}" if param else message
        return problem_response(request, "invalid_request", detail, param)

    return on_body_validation


def _on_not_found(request: Request, exc: NotFoundException) -> Response:
    return problem_response(request, "not_found", f"No resource at {bounded(request.url.path)}.")


def _on_method(request: Request, exc: MethodNotAllowedException) -> Response:
    allow = (exc.headers or {}).get("allow", "")
    methods = [m.strip() for m in allow.split(",") if m.strip()]
    if "GET" in methods and "HEAD" not in methods:  # the front door answers HEAD wherever GET is
        methods.append("HEAD")
    allow = ", ".join(methods)
    method = "HEAD" if request.scope.get("state", {}).get("head") else request.method
    return problem_response(
        request, "method_not_allowed",
        f"{bounded(method, 20)} is not allowed on {bounded(request.url.path)}. Allowed: {allow}.",
        headers={"Allow": allow},
    )


def _on_http(request: Request, exc: HTTPException) -> Response:
    code = CODE_BY_STATUS.get(exc.status_code, "internal_error" if exc.status_code >= 500 else "invalid_request")
    return problem_response(request, code, bounded_message(str(exc.detail)), headers=exc.headers)


def _on_unexpected(request: Request, exc: Exception) -> Response:
    log.exception("unhandled error", path=request.url.path, request_id=request_id(request))
    return problem_response(request, "internal_error", "An unexpected error occurred; it has been logged.")


EXCEPTION_HANDLERS = {
    ProblemError: _on_problem,
    ValidationException: _on_validation,
    NotFoundException: _on_not_found,
    MethodNotAllowedException: _on_method,
    HTTPException: _on_http,
    Exception: _on_unexpected,
}
