"""Conventions shared by every route (spec 2.1): list envelope, cursors, metadata, datasets."""

from __future__ import annotations

import base64
import binascii
import hashlib
from typing import Any

import msgspec
from litestar import Request

from api.problems import ProblemError
from schemas.cost_line import RG_LINE  # noqa: F401  (re-exported: every route's cost line)
from schemas.datasets import Dataset, pg_schema


_cursor_encoder = msgspec.msgpack.Encoder()
_cursor_decoder = msgspec.msgpack.Decoder()


def dataset_of(request: Request) -> Dataset:
    """The dataset this request reads: `test` for test-mode credentials, else `live`."""
    return request.scope.get("state", {}).get("dataset", "live")


def schema_of(request: Request) -> str:
    """Quoted Postgres schema of the request's dataset, safe to put into SQL text."""
    return f'"{pg_schema(dataset_of(request))}"'


def request_id(request: Request) -> str:
    return request.scope.get("state", {}).get("request_id", "req_unknown")


def _filters_digest(filters: dict[str, Any]) -> bytes:
    canonical = msgspec.json.encode({k: v for k, v in sorted(filters.items()) if v is not None})
    return hashlib.blake2b(canonical, digest_size=8).digest()


def encode_cursor(filters: dict[str, Any], position: list[Any]) -> str:
    """An opaque cursor for the page after `position`, bound to the filters of this page."""
    raw = _cursor_encoder.encode([_filters_digest(filters), position])
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def decode_cursor(cursor: str | None, filters: dict[str, Any]) -> list[Any] | None:
    """The position a cursor continues from; refuses a cursor made under other filters."""
    if cursor is None:
        return None
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
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

