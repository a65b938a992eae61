"""Conventions shared by every route: list envelope, cursors, metadata, datasets."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from contextvars import ContextVar
from typing import Any

import msgspec
from litestar import Request

from api.problems import ProblemError
from schemas.cost_line import RG_LINE  # noqa: F401  (re-exported: every route's cost line)
from schemas.datasets import Dataset, pg_schema


_cursor_encoder = msgspec.msgpack.Encoder()
_cursor_decoder = msgspec.msgpack.Decoder()
CURSOR_TAG_BYTES = 16  # HMAC-SHA256 cut to 128 bits: a forged cursor is found out, not guessed
# The key that signs cursors, set for each request by the app's `before_request` hook
# (api.request_checks) from the app's settings: routes mint and read cursors without passing it.
_cursor_key: ContextVar[bytes] = ContextVar("cursor_key")


def cursor_key(secret: str) -> bytes:
    """The cursor-signing key, derived from the service secret (never the secret itself)."""
    return hmac.new(secret.encode(), b"svc cursor signing key v1", hashlib.sha256).digest()


def use_cursor_key(key: bytes) -> None:
    _cursor_key.set(key)


def _cursor_tag(raw: bytes) -> bytes:
    try:
        key = _cursor_key.get()
    except LookupError:
        raise RuntimeError("no cursor key: api.request_checks.check_request sets it for each request") from None
    return hmac.new(key, raw, hashlib.sha256).digest()[:CURSOR_TAG_BYTES]


def dataset_of(request: Request) -> Dataset:
    """The dataset this request reads: `test` for test-mode credentials, else `live`."""
    return request.scope.get("state", {}).get("dataset", "live")


def schema_of(request: Request) -> str:
    """Quoted Postgres schema of the request's dataset, safe to put into SQL text."""
    return f'"{pg_schema(dataset_of(request))}"'


def request_id(request: Request) -> str:
    """The ID the front door gave this request (api/front.py); the one reader of it, for routes
    and problem responses alike."""
    return request.scope.get("state", {}).get("request_id", "req_unknown")


def _filters_digest(filters: dict[str, Any]) -> bytes:
    canonical = msgspec.json.encode({k: v for k, v in sorted(filters.items()) if v is not None})
    return hashlib.blake2b(canonical, digest_size=8).digest()


def encode_cursor(filters: dict[str, Any], position: list[Any]) -> str:
    """An opaque cursor for the page after `position`, bound to the filters of this page and
    signed (HMAC over its contents), so a client can hold it but not make or alter one."""
    raw = _cursor_encoder.encode([_filters_digest(filters), position])
    return base64.urlsafe_b64encode(raw + _cursor_tag(raw)).rstrip(b"=").decode()


def decode_cursor(cursor: str | None, filters: dict[str, Any]) -> list[Any] | None:
    """The position a cursor continues from; refuses a cursor this service did not make as it
    is (before reading anything in it) and one made under other filters."""
    if cursor is None:
        return None
    try:
        signed = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    except (binascii.Error, ValueError):
        raise ProblemError("invalid_request", "The cursor is not valid.", param="cursor") from None
    raw, tag = signed[:-CURSOR_TAG_BYTES], signed[-CURSOR_TAG_BYTES:]
    if len(signed) <= CURSOR_TAG_BYTES or not hmac.compare_digest(tag, _cursor_tag(raw)):
        raise ProblemError("invalid_request", "The cursor is not valid: it was altered, or not made by this service.",
                           param="cursor")
    try:
        digest, position = _cursor_decoder.decode(raw)
    except (binascii.Error, ValueError, msgspec.DecodeError, TypeError):
        raise ProblemError("invalid_request", "The cursor is not valid.", param="cursor") from None
    if not isinstance(position, list) or digest != _filters_digest(filters):
        raise ProblemError(
            "invalid_request", "The cursor was made with other filters; send the same filters as the page that produced it.",
            param="cursor",
        )
    return position


def page(data: list[Any], has_more: bool, next_cursor: str | None) -> dict[str, Any]:
    return {"object": "list", "data": data, "has_more": has_more, "next_cursor": next_cursor}

