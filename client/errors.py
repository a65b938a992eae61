"""Problem objects raised as typed exceptions: the class follows the problem's `code`,
and every error carries `code`, `param`, `request_id` and the whole problem."""

from __future__ import annotations

from .models import Problem


class SvcError(Exception):
    """Anything this client raises."""


class APIConnectionError(SvcError):
    """The request never got an answer (connection refused, reset, DNS)."""


class APITimeoutError(APIConnectionError):
    """The request timed out."""


class APIError(SvcError):
    """The API answered with a problem object."""

    def __init__(self, problem: Problem, status: int, headers: dict[str, str] | None = None) -> None:
        self.problem = problem
        self.status = status
        self.code = problem.code
        self.param = problem.param
        self.request_id = problem.request_id
        self.retryable = problem.retryable
        self.headers = headers or {}
        super().__init__(f"{status} {problem.code}: {problem.detail or problem.title or ''}"
                         + (f" (param {problem.param})" if problem.param else "")
                         + (f" [{problem.request_id}]" if problem.request_id else ""))


class InvalidRequestError(APIError):
    """400: a field, header or cursor the API refuses; `param` names it."""


class AuthenticationError(APIError):
    """401 `unauthenticated`."""


class PermissionDeniedError(APIError):
    """403: `insufficient_scope` (`param` is the scope), `not_entitled`, `too_many_topics`, ..."""


class NotFoundError(APIError):
    """404 `not_found`."""


class ConflictError(APIError):
    """409, e.g. `idempotency_in_progress`."""


class GoneError(APIError):
    """410: a retired version, an expired answer or operation."""


class UnprocessableError(APIError):
    """422: inputs the calculation or operation cannot take."""


class RateLimitError(APIError):
    """429 `rate_limited`: retried with backoff before it is raised."""


class QuotaExhaustedError(APIError):
    """429 `quota_exhausted`: never retried; the credits are gone until the period resets."""


class ServerError(APIError):
    """5xx: retried with backoff before it is raised."""


_BY_CODE: dict[str, type[APIError]] = {
    "unauthenticated": AuthenticationError,
    "rate_limited": RateLimitError,
    "quota_exhausted": QuotaExhaustedError,
    "not_found": NotFoundError,
}
_BY_STATUS: dict[int, type[APIError]] = {
    400: InvalidRequestError, 401: AuthenticationError, 403: PermissionDeniedError, 404: NotFoundError,
    409: ConflictError, 410: GoneError, 422: UnprocessableError, 429: RateLimitError,
}


def error_for(problem: Problem, status: int, headers: dict[str, str] | None = None) -> APIError:
    cls = _BY_CODE.get(problem.code) or _BY_STATUS.get(status) or (ServerError if status >= 500 else APIError)
    return cls(problem, status, headers)
