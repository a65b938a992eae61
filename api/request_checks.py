"""What every request must be before a route sees it: the app's `before_request` hook.

Litestar alone is lax where a client library would trip later: it takes the last of repeated
query parameters, reads `0.0` as the integer 0, reads `status=null` as "no filter", replaces
bytes that are not UTF-8 in the query with U+FFFD, parses a `text/plain` body as JSON, and lets
a body nested 10,000 deep reach the decoder's recursion limit (a 500). Each of those is refused
here with a problem object naming what is wrong (docs/api.md, "Bad input").
"""

from __future__ import annotations

import re
from typing import Any, Literal, get_args, get_origin
from urllib.parse import unquote_to_bytes

from litestar import Request
from litestar.enums import ParamType
from litestar.exceptions import HTTPException, SerializationException
from litestar.params import ParameterKwarg

from api.conventions import use_cursor_key
from api.problems import ProblemError, bounded

# the media types a JSON body may be sent as (RFC 8259: JSON text is UTF-8; any other charset
# is refused rather than guessed)
JSON_TYPES = ("application/json",)
_INTEGER = re.compile(r"-?[0-9]+")
_NO_VALUE = frozenset({"null", ""})  # lax parsing reads these as None for a typed parameter


class QueryRule:
    """How one scalar query parameter of a route is checked."""

    __slots__ = ("integer", "allowed", "typed")

    def __init__(self, annotation: Any) -> None:
        types = [t for t in get_args(annotation) if t is not type(None)] if get_origin(annotation) is not Literal else []
        types = types or [annotation]
        literal: list[str] = []
        for t in types:
            if get_origin(t) is Literal:
                literal.extend(str(v) for v in get_args(t))
        self.integer = types == [int]
        self.allowed = tuple(literal) if literal and all(get_origin(t) is Literal for t in types) else None
        self.typed = types != [str]  # anything but text: "null" and "" are not values of it


_RULES: dict[Any, dict[str, QueryRule]] = {}  # per handler function (the same in every app)
_BODY: dict[Any, bool] = {}  # per handler function: whether it reads a JSON body


def _is_list(annotation: Any) -> bool:
    types = [t for t in get_args(annotation) if t is not type(None)] or [annotation]
    return any(get_origin(t) in (list, tuple, set, frozenset) or t in (list, tuple) for t in types)


def query_rules(handler) -> dict[str, QueryRule]:
    """The handler's scalar query parameters by their name in the query (list-typed ones may
    repeat and are left out)."""
    fn = handler.fn
    rules = _RULES.get(fn)
    if rules is None:
        rules = {}
        for name, field in handler.parsed_fn_signature.parameters.items():
            kwarg = field.kwarg_definition
            if not isinstance(kwarg, ParameterKwarg) or kwarg.param_type is not ParamType.QUERY:
                continue
            if _is_list(field.annotation):
                continue
            rules[kwarg.name or name] = QueryRule(field.annotation)
        _RULES[fn] = rules
    return rules


def reads_body(handler) -> bool:
    fn = handler.fn
    reads = _BODY.get(fn)
    if reads is None:
        reads = _BODY[fn] = "data" in handler.parsed_fn_signature.parameters
    return reads


def _invalid(param: str, detail: str) -> ProblemError:
    return ProblemError("invalid_request", detail, param=bounded(param))


def check_utf8_query(query: bytes) -> None:
    """Every name and value of the query, percent-decoded, must be UTF-8: Litestar would put
    U+FFFD in place of the bad bytes and search for that."""
    for part in query.split(b"&"):
        if not part:
            continue
        raw_name, _, raw_value = part.partition(b"=")
        try:
            name = unquote_to_bytes(raw_name.replace(b"+", b" ")).decode("utf-8")
        except UnicodeDecodeError:
            raise _invalid("query", "A query parameter name is not UTF-8 once percent-decoded.") from None
        try:
            unquote_to_bytes(raw_value.replace(b"+", b" ")).decode("utf-8")
        except UnicodeDecodeError:
            raise _invalid(name, f"'{bounded(name)}' is not UTF-8 once percent-decoded.") from None


def check_query(request: Request) -> None:
    """A scalar query parameter given twice, an integer written as anything but digits, a value
    outside an enumeration (`null` and empty included), or a `null`/empty value for any
    parameter that is not free text, is a 400 naming it."""
    query = request.scope["query_string"]
    if not query:
        return
    check_utf8_query(query)
    rules = query_rules(request.route_handler)
    if not rules:
        return
    seen: set[str] = set()
    for name, value in request.query_params.multi_items():
        rule = rules.get(name)
        if rule is None:
            continue
        if name in seen:
            raise _invalid(name, f"'{name}' is given more than once.")
        seen.add(name)
        if rule.allowed is not None:
            if value not in rule.allowed:
                raise _invalid(name, f"'{name}' must be one of {', '.join(rule.allowed)}; got '{bounded(value)}'.")
        elif rule.integer:
            if not _INTEGER.fullmatch(value):
                raise _invalid(name, f"'{name}' must be an integer, written in digits.")
        elif rule.typed and value in _NO_VALUE:
            raise _invalid(name, f"'{name}' needs a value; leave the parameter out for no filter.")


async def check_body(request: Request) -> None:
    """A route that reads a JSON body gets one: present, declared JSON, UTF-8, well-formed,
    not nested past the decoder's limit, within the route's size limit."""
    media_type, options = request.content_type
    declared = bool(request.headers.get("content-type"))
    if declared and media_type not in JSON_TYPES and not media_type.endswith("+json"):
        raise ProblemError("unsupported_media_type",
                           f"The body must be sent as application/json, not '{bounded(media_type)}'.",
                           param="Content-Type")
    charset = options.get("charset")
    if charset is not None and charset.lower() not in ("utf-8", "utf8"):
        raise ProblemError("unsupported_media_type", f"JSON is read as UTF-8 only, not '{bounded(charset)}'.",
                           param="Content-Type")
    try:
        body = await request.body()
    except HTTPException as exc:  # over the route's size limit (413)
        if exc.status_code == 413:
            limit = request.route_handler.resolve_request_max_body_size()
            raise ProblemError("payload_too_large", f"The body is larger than {limit:,} bytes.", param="body") from None
        raise
    if not body:
        raise _invalid("body", "This operation needs a JSON body.")
    if not declared:
        raise ProblemError("unsupported_media_type", "Send the body with 'Content-Type: application/json'.",
                           param="Content-Type")
    try:
        await request.json()  # kept on the request: the route's own decoding reuses it
    except SerializationException as exc:
        raise _invalid("body", f"The body is not valid JSON: {exc.detail.removeprefix('Bad Request: ')}") from None
    except UnicodeDecodeError:
        raise _invalid("body", "The body is not UTF-8.") from None
    except RecursionError:
        raise _invalid("body", "The body is nested too deeply.") from None


async def check_request(request: Request) -> None:
    """`before_request` of every route."""
    use_cursor_key(request.app.state.app_state.cursor_key())
    check_query(request)
    if reads_body(request.route_handler):
        await check_body(request)
    return None
