"""The front door: an ASGI layer around the whole app, before routing.

Every HTTP response gets `Request-Id`, `Api-Version` and `Client-Request-Id`; a credential in
the URL or an unsupported `Api-Version` is refused before any route (or 404) is reached; one
access-log line per request (when the log level takes it), which never contains the query
string or a credential; the request's Prometheus metrics (api/metrics.py). A HEAD request is
answered as its GET without the body (RFC 9110 9.3.2), and a response is gzipped for a client
that accepts it.

It runs on every request, so it reads only the two request headers it needs and keeps the
credential scan of a query string it has seen before.
"""

from __future__ import annotations

import logging
import re
import time
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl

import msgspec
import structlog

from api import metrics
from api.compress import Gzip
from api.problems import PROBLEM_MEDIA_TYPE, bounded, build_problem
from domain.ids import RandomIds

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
# a client's own correlation ID: the API contract gives it no bound, so this one is ours (documented in
# docs/api.md); a value beyond it is refused and never echoed
CLIENT_REQUEST_ID_MAX = 255
_CLIENT_REQUEST_ID = re.compile(rf"[\x21-\x7e]{{1,{CLIENT_REQUEST_ID_MAX}}}")
# the one credential a URL may carry: a wire ticket on the stream endpoint
_TICKET_PATH = re.compile(r"^/v1/stream/")
_ADDED = frozenset({b"request-id", b"api-version", b"client-request-id"})
_API_VERSION = API_VERSION.encode()
_QUERY_CACHE_SIZE = 4096
# Responses are gzipped for a client that accepts it, from this size on: below it the gzip
# header and the CPU cost more than the bytes saved. Level 1: a third of level 6's CPU for about
# a third more bytes (a 30 KB JSON body: 0.2 ms and 3.9 KB against 0.7 ms and 2.9 KB), and
# CPU is what the p99 target is spent on.
COMPRESS_MIN_BYTES = 1024
COMPRESS_LEVEL = 1
_NOT_COMPRESSED = "/v1/stream/"  # server-sent events go out as they happen, never held in a compressor

log = structlog.get_logger("api.access")


@lru_cache(maxsize=_QUERY_CACHE_SIZE)  # clients repeat their query strings; the parse is the cost
def _query_credential(query: bytes, ticket_allowed: bool) -> str | None:
    for name, value in parse_qsl(query.decode("latin-1"), keep_blank_values=True):
        norm = name.lower().replace("-", "_")
        if norm == "ticket" and ticket_allowed:
            continue
        if norm in CREDENTIAL_PARAMS or _SECRET_VALUE.search(value):
            return name
    return None


def credential_in_url(path: str, query: bytes) -> str | None:
    """The name of the URL part that carries a credential, or None."""
    if query:
        name = _query_credential(query, bool(_TICKET_PATH.match(path)))
        if name is not None:
            return name
    if _SECRET_VALUE.search(path):
        return "path"
    return None


def accepts_gzip(accept_encoding: str) -> bool:
    """Whether an `Accept-Encoding` value takes gzip: named with a weight above 0 (RFC 9110 12.5.3)."""
    for item in accept_encoding.split(","):
        coding, _, params = item.strip().partition(";")
        if coding.strip().lower() not in ("gzip", "x-gzip"):
            continue
        weight = params.strip().lower()
        if not weight.startswith("q="):
            return True
        try:
            return float(weight[2:]) > 0
        except ValueError:
            return False
    return False


_VARY = [(b"vary", b"Accept-Encoding")]


def _vary(headers) -> list:
    """`Vary: Accept-Encoding` for a body of a size that is gzipped for a client that asks and
    sent as it is (this one) to another: a shared cache must not give one's to the other. The
    compressor says so itself on what it compressed."""
    length = None
    for k, v in headers:
        if k == b"content-encoding" or (k == b"vary" and b"accept-encoding" in v.lower()):
            return []
        if k == b"content-length":
            length = v
    return _VARY if length is not None and int(length) >= COMPRESS_MIN_BYTES else []


_BODILESS = frozenset({"GET", "HEAD"})


def _with_body(receive):
    """`receive` whose `http.request` messages always carry `body`: ASGI lets a server leave it
    out when empty (b"" then; h2corn does, on a request's last message) and Litestar reads it
    as present. Only requests that may carry a body pay for the wrapper."""

    async def receive_with_body():
        message = await receive()
        if message["type"] == "http.request" and "body" not in message:
            message = {**message, "body": b""}
        return message

    return receive_with_body


def head_only(send, receive):
    """`send` and `receive` for a HEAD answered as GET: the response's status and headers
    (`Content-Length` included) as GET would send them, then an empty body at once. A streaming
    response (SSE) ends there too: after the head is sent, `receive` says the client has gone."""
    sent = False

    async def send_head(message) -> None:
        nonlocal sent
        kind = message["type"]
        if kind == "http.response.start":
            await send(message)
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            sent = True
        elif kind != "http.response.body" or not sent:
            await send(message)

    async def receive_head():
        if sent:
            return {"type": "http.disconnect"}
        return await receive()

    return send_head, receive_head


SERVER_SEND = "svc.server_send"  # scope key: the ASGI server's `send` of a WebSocket connection


class FrontDoor:
    def __init__(self, app: Any, docs_url: str) -> None:
        self.app = app
        # compressed here, outside the app, so what the read cache keeps (api/read_cache.py) is
        # the plain body, served compressed or not per request as each client asks
        self._gzipped = Gzip(app, COMPRESS_MIN_BYTES, COMPRESS_LEVEL)
        self.docs_url = docs_url
        self._request_id = RandomIds("request")
        self._log: Any = None  # the configured logger, bound at the first request

    async def __call__(self, scope, receive, send) -> None:
        kind = scope["type"]
        if kind == "websocket" and credential_in_url(scope.get("path", ""), scope.get("query_string", b"")):
            await receive()  # websocket.connect; closing before accepting refuses the handshake (HTTP 403)
            await send({"type": "websocket.close", "code": 4003, "reason": "credential_in_url"})
            return
        if kind != "http":
            if kind == "websocket":
                # the server's own send, for the Wire's frames (api/routes/socket.py `Connection._write`):
                # the app's wrappers around it cost a few percent of a busy fan-out and do nothing
                # for a `websocket.send`
                scope[SERVER_SEND] = send
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        request_id = self._request_id()
        version = client_request_id = None
        gzip = False
        served = self.app
        for name, value in scope["headers"]:
            name = name.lower()
            if name == b"client-request-id":
                client_request_id = value.decode("latin-1")
            elif name == b"api-version":
                version = value.decode("latin-1")
            elif name == b"accept-encoding" and b"gzip" in value:
                gzip = accepts_gzip(value.decode("latin-1"))
        state = scope.get("state")
        if state is None:
            state = scope["state"] = {}
        state["gzip"] = gzip  # the read cache serves its kept gzip body then (api/read_cache.py)
        state["request_id"] = request_id
        path = scope["path"]
        if gzip and not path.startswith(_NOT_COMPRESSED):
            served = self._gzipped
        refusal = self._refusal(path, scope.get("query_string", b""), version, client_request_id)
        if client_request_id is not None and not _CLIENT_REQUEST_ID.fullmatch(client_request_id):
            client_request_id = None  # refused: not echoed
        extra = [
            (b"request-id", request_id.encode()),
            (b"api-version", _API_VERSION),
            (b"client-request-id", client_request_id.encode("latin-1") if client_request_id else b""),
        ]
        status = 0
        method = scope["method"]
        if method not in _BODILESS:
            receive = _with_body(receive)
        if method == "HEAD":  # answered as GET without its body (RFC 9110 9.3.2); see head_only
            # the app sees GET in a scope of its own: the server keeps reading the method from its
            # scope to frame the answer (uvicorn would send a HEAD's SSE answer chunked, its
            # terminating chunk left on the connection for the next answer to be read from)
            scope = {**scope, "method": "GET"}
            state["head"] = True
            send, receive = head_only(send, receive)

        async def send_with_headers(message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = message.get("headers") or []
                if any(k in _ADDED for k, _ in headers):  # the app writes names in lower case
                    headers = [(k, v) for k, v in headers if k not in _ADDED]
                message = {**message, "headers": [*headers, *extra, *_vary(headers)]}
            await send(message)

        metrics.started()
        try:
            if refusal is not None:
                code, detail, param = refusal
                await self._problem(send_with_headers, code, detail, param, request_id)
            else:
                await served(scope, receive, send_with_headers)
        finally:
            seconds = time.perf_counter() - started
            metrics.finished()
            if path != "/metrics":
                metrics.observe(method, scope.get("path_template"), status, seconds)
            if self._log is None:
                self._log = log.bind()
            if self._log.is_enabled_for(logging.INFO):
                self._log.info(
                    "request",
                    method=method,
                    # never the query string, nor a path that carries a credential
                    path="[redacted]" if refusal is not None and refusal[2] == "path" else path,
                    status=status,
                    ms=round(seconds * 1000, 2),
                    request_id=request_id,
                )

    def _refusal(
        self, path: str, query: bytes, version: str | None, client_request_id: str | None,
    ) -> tuple[str, str, str] | None:
        param = credential_in_url(path, query)
        if param is not None:
            return (
                "credential_in_url",
                f"The URL carries a credential in '{param}'. Send API keys only in the Authorization "
                "header; treat this key as exposed and rotate it.",
                param,
            )
        if version is not None and version not in SUPPORTED_VERSIONS:
            return (
                "unsupported_api_version",
                f"Api-Version '{bounded(version, 40)}' is not supported. Supported versions: {', '.join(SUPPORTED_VERSIONS)}.",
                "Api-Version",
            )
        if client_request_id is not None and not _CLIENT_REQUEST_ID.fullmatch(client_request_id):
            return ("invalid_request",
                    f"Client-Request-Id must be 1 to {CLIENT_REQUEST_ID_MAX} visible ASCII characters; "
                    f"this one ({len(client_request_id)} characters) is not echoed.", "Client-Request-Id")
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
