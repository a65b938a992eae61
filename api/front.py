"""The front door: an ASGI layer around the whole app, before routing.

Every HTTP response gets `Request-Id`, `Api-Version` and `Client-Request-Id`; a credential in
the URL or an unsupported `Api-Version` is refused before any route (or 404) is reached; one
access-log line per request, which never contains the query string or a credential.
"""

from __future__ import annotations

import re
import time
from typing import Any
from urllib.parse import parse_qsl

import msgspec
import structlog

from api.problems import PROBLEM_MEDIA_TYPE, build_problem
from schemas.ids import random_id

API_VERSION = "2026-10-05"
SUPPORTED_VERSIONS = (API_VERSION,)

# query parameter names that carry secrets (compared lower-cased, with - read as _)
CREDENTIAL_PARAMS = frozenset({
    "api_key", "apikey", "key", "token", "access_token", "accesstoken", "auth", "auth_token",
    "authorization", "bearer", "secret", "client_secret", "password", "passwd", "session",
    "session_token", "sessionid", "id_token", "refresh_token", "x_api_key", "jwt", "credential",
    "credentials", "signature", "sig", "ticket",
})
_SECRET_VALUE = re.compile(r"(svc_(live|test)_|bearer\s)", re.IGNORECASE)
_CLIENT_REQUEST_ID = re.compile(r"^[\x21-\x7e]{1,255}$")
# the one credential a URL may carry: a wire ticket on the stream endpoint (spec 5.2)
_TICKET_PATH = re.compile(r"^/v1/stream/")

log = structlog.get_logger("api.access")


def credential_in_url(path: str, query: bytes) -> str | None:
    """The name of the URL part that carries a credential, or None."""
    for name, value in parse_qsl(query.decode("latin-1"), keep_blank_values=True):
        norm = name.lower().replace("-", "_")
        if norm == "ticket" and _TICKET_PATH.match(path):
            continue
        if norm in CREDENTIAL_PARAMS or _SECRET_VALUE.search(value):
            return name
    if _SECRET_VALUE.search(path):
        return "path"
    return None


class FrontDoor:
    def __init__(self, app: Any, docs_url: str) -> None:
        self.app = app
        self.docs_url = docs_url

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "websocket" and credential_in_url(scope.get("path", ""), scope.get("query_string", b"")):
            await receive()  # websocket.connect; closing before accepting refuses the handshake (HTTP 403)
            await send({"type": "websocket.close", "code": 4003, "reason": "credential_in_url"})
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        request_id = random_id("request")
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        client_request_id = headers.get("client-request-id", "")
        scope.setdefault("state", {})
        scope["state"]["request_id"] = request_id
        extra = [
            (b"request-id", request_id.encode()),
            (b"api-version", API_VERSION.encode()),
            (b"client-request-id", client_request_id.encode("latin-1")),
        ]
        status_seen = {"status": 0}

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                status_seen["status"] = message["status"]
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in {h for h, _ in extra}]
                message = {**message, "headers": kept + extra}
            await send(message)

        refusal = self._refusal(scope, headers, client_request_id)
        try:
            if refusal is not None:
                code, detail, param = refusal
                await self._problem(send_with_headers, code, detail, param, request_id)
            else:
                await self.app(scope, receive, send_with_headers)
        finally:
            log.info(
                "request",
                method=scope.get("method"),
                # never the query string, nor a path that carries a credential
                path="[redacted]" if refusal is not None and refusal[2] == "path" else scope.get("path"),
                status=status_seen["status"],
                ms=round((time.perf_counter() - started) * 1000, 2),
                request_id=request_id,
            )

    def _refusal(self, scope, headers: dict[str, str], client_request_id: str) -> tuple[str, str, str] | None:
        param = credential_in_url(scope.get("path", ""), scope.get("query_string", b""))
        if param is not None:
            return (
                "credential_in_url",
                f"The URL carries a credential in '{param}'. Send API keys only in the Authorization "
                "header; treat this key as exposed and rotate it.",
                param,
            )
        version = headers.get("api-version")
        if version is not None and version not in SUPPORTED_VERSIONS:
            return (
                "unsupported_api_version",
                f"Api-Version '{version[:40]}' is not supported. Supported versions: {', '.join(SUPPORTED_VERSIONS)}.",
                "Api-Version",
            )
        if "client-request-id" in headers and not _CLIENT_REQUEST_ID.match(client_request_id):
            return ("invalid_request", "Client-Request-Id must be 1 to 255 visible ASCII characters.", "Client-Request-Id")
        return None

    async def _problem(self, send, code: str, detail: str, param: str | None, request_id: str) -> None:
        problem = build_problem(code, detail, param=param, request_id=request_id, docs_url=self.docs_url)
        body = msgspec.json.encode(problem)
        await send({
            "type": "http.response.start",
            "status": problem.status,
            "headers": [(b"content-type", PROBLEM_MEDIA_TYPE.encode()), (b"content-length", str(len(body)).encode())],
        })
        await send({"type": "http.response.body", "body": body})
