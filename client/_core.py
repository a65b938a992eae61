"""The HTTP core shared by `Client` and `AsyncClient`: headers, decoding, problems, retries.

A resource method describes its call (`Call`); the sync client runs it and returns the value,
the async client returns a coroutine. So one set of resource classes serves both.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import httpx
import msgspec

from . import retries
from .errors import APIError, error_for
from .models import Problem

API_VERSION = "2026-10-05"
VERSION = "0.1.0"
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=5.0)


@dataclass(frozen=True)
class Call:
    method: str
    path: str
    model: Any  # msgspec type the body decodes to
    params: Mapping[str, Any] = field(default_factory=dict)
    body: Any = None
    paged: bool = False  # the answer is a list envelope: wrap it in a Page that follows cursors
    idempotency_key: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)  # extra headers (a proxy's X-Forwarded-For)

    def with_cursor(self, cursor: str) -> "Call":
        return replace(self, params={**self.params, "cursor": cursor})


def clean_params(params: Mapping[str, Any]) -> dict[str, str]:
    """Query parameters with None dropped and values in the API's spelling."""
    out: dict[str, str] = {}
    for key, value in params.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif hasattr(value, "isoformat"):
            value = value.isoformat()
        out[key.rstrip("_")] = str(value)  # from_ -> from
    return out


class Core:
    """Configuration and the pure parts of a request: what to send, what came back."""

    def __init__(self, base_url: str, api_key: str | None, api_version: str | None,
                 max_retries: int, max_retry_wait: float) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.api_version = api_version or API_VERSION
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait

    def headers(self, call: Call, client_request_id: str) -> dict[str, str]:
        h = {"Api-Version": self.api_version, "Client-Request-Id": client_request_id,
             "Accept": "application/json", "User-Agent": f"svc-client-python/{VERSION}"}
        if self.api_key:
            h["Authorization"] = f"Bearer {self.api_key}"
        if call.method == "POST":
            h["Content-Type"] = "application/json"
            h["Idempotency-Key"] = call.idempotency_key or f"idem_{uuid.uuid4().hex}"
        return h

    def build(self, call: Call) -> tuple[str, str, dict[str, str], dict[str, str], bytes | None]:
        """method, url, params, headers and body of a call; the ids are fixed here so retries
        of one call repeat them (the server sees one Client-Request-Id and Idempotency-Key)."""
        headers = {**call.headers, **self.headers(call, str(uuid.uuid4()))}
        body = msgspec.json.encode(call.body) if call.body is not None else None
        return call.method, self.base_url + call.path, clean_params(call.params), headers, body

    def decode(self, call: Call, response: httpx.Response) -> Any:
        return msgspec.json.decode(response.content, type=call.model)

    def error(self, response: httpx.Response) -> APIError:
        try:
            problem = msgspec.json.decode(response.content, type=Problem)
        except (msgspec.DecodeError, msgspec.ValidationError):
            problem = Problem(status=response.status_code,
                              code="internal_error" if response.status_code >= 500 else "unknown",
                              detail=response.text[:500] or response.reason_phrase,
                              request_id=response.headers.get("request-id"))
        if problem.request_id is None:
            problem = msgspec.structs.replace(problem, request_id=response.headers.get("request-id"))
        return error_for(problem, response.status_code, dict(response.headers))

    def retry_wait(self, attempt: int, response: httpx.Response | None) -> float | None:
        """Seconds before retrying, or None: do not retry (the caller raises)."""
        if attempt >= self.max_retries:
            return None
        if response is None:  # no answer at all
            return retries.backoff(attempt)
        code = None
        if response.status_code == 429:
            try:
                code = msgspec.json.decode(response.content, type=Problem).code
            except (msgspec.DecodeError, msgspec.ValidationError):
                code = None
        if not retries.should_retry(response.status_code, code):
            return None
        return retries.wait_before_retry(attempt, response.headers, self.max_retry_wait)
