"""The first-party site's session: the credential of the page the API serves at `/`. Pure.

The page may hold no API key (anything a page holds, its reader holds), so its own calls
(`/site/slate`, `/site/ticket`: api/routes/site.py) are let in by a cookie it gets with its HTML:

    svc_session=s1.<session id>.<issued, Unix seconds>.<tag>; Path=/site; Max-Age=43200; HttpOnly; SameSite=Strict[; Secure]

- `tag` is HMAC-SHA256(server secret, "svc site session v1|<id>|<issued>") cut to 128 bits:
  the cookie is signed, not stored, so any API process reads it and none keeps a table of them.
- HttpOnly: the page's script never reads it (a script injected into the page could not take it
  away); the browser sends it with the page's own calls only.
- SameSite=Strict: another site's page cannot make the browser send it (no cross-site request
  forgery of a ticket); `Path=/site` keeps it off every other route.
- Secure wherever the page is served over TLS (the connection's scheme, or `SVC_PUBLIC_URL`).
- It names no account and grants nothing beyond the page's reads: a visitor, not a signed-in
  user. It lasts 12 hours, renewed with every load of the page and by a ticket call in its
  second half, so a page left open keeps working.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

COOKIE = "svc_session"
COOKIE_PATH = "/site"
SESSION_SECONDS = 12 * 3600
_VERSION = "s1"
_TAG_BYTES = 16


def _tag(secret: bytes, session_id: str, issued: int) -> str:
    mac = hmac.new(secret, f"svc site session v1|{session_id}|{issued}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac[:_TAG_BYTES]).rstrip(b"=").decode()


def new_session(secret: bytes, now: float) -> str:
    """A new cookie value, issued at `now` (Unix seconds)."""
    session_id = secrets.token_urlsafe(16)
    issued = int(now)
    return f"{_VERSION}.{session_id}.{issued}.{_tag(secret, session_id, issued)}"


def _parts(value: str) -> tuple[str, int, str] | None:
    parts = value.split(".")
    if len(parts) != 4 or parts[0] != _VERSION or not parts[2].isdigit() or len(parts[2]) > 12:
        return None
    return parts[1], int(parts[2]), parts[3]


def session_id_of(secret: bytes, value: str | None, now: float) -> str | None:
    """The session ID of a valid, unexpired cookie value; None for anything else."""
    parsed = _parts(value or "")
    if parsed is None:
        return None
    session_id, issued, tag = parsed
    if not 0 <= now - issued < SESSION_SECONDS:
        return None
    return session_id if hmac.compare_digest(tag, _tag(secret, session_id, issued)) else None


def needs_renewal(value: str, now: float) -> bool:
    """Whether a valid cookie is past half its life (a ticket call then renews it)."""
    parsed = _parts(value)
    return parsed is not None and now - parsed[1] >= SESSION_SECONDS / 2


def set_cookie(value: str, secure: bool) -> str:
    """The `Set-Cookie` header value."""
    attributes = [f"{COOKIE}={value}", f"Path={COOKIE_PATH}", f"Max-Age={SESSION_SECONDS}", "HttpOnly",
                  "SameSite=Strict"]
    if secure:
        attributes.append("Secure")
    return "; ".join(attributes)


def cookie_value(cookie_header: str | None) -> str | None:
    """Our cookie's value from a `Cookie` request header (the first one, as RFC 6265 orders them)."""
    for part in (cookie_header or "").split(";"):
        name, sep, value = part.strip().partition("=")
        if sep and name == COOKIE:
            return value.strip()
    return None
