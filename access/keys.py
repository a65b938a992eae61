"""API key format: `svc_{mode}_{handle}{secret}`. Pure.

The handle (16 characters, 80 bits) finds the key's row; the secret (32 characters, 160 bits)
proves possession. Only HMAC-SHA256(server secret, whole key) is stored, so a database dump
gives neither a usable key nor a way to test guesses without the server secret.
"""

from __future__ import annotations

import hmac
import re
import secrets
from dataclasses import dataclass

from access.plans import Mode
from domain.ids import ALPHABET

HANDLE_LENGTH = 16
SECRET_LENGTH = 32
_KEY = re.compile(rf"^svc_(live|test)_([{ALPHABET}]{{{HANDLE_LENGTH}}})([{ALPHABET}]{{{SECRET_LENGTH}}})$")
# compared against when no row matches, so an unknown handle costs the same work as a known one
_DUMMY_DIGEST = bytes(32)


@dataclass(frozen=True)
class ParsedKey:
    mode: Mode
    handle: str


def new_key(mode: Mode) -> tuple[str, str]:
    """A fresh key and its handle."""
    handle = "".join(secrets.choice(ALPHABET) for _ in range(HANDLE_LENGTH))
    secret = "".join(secrets.choice(ALPHABET) for _ in range(SECRET_LENGTH))
    return f"svc_{mode}_{handle}{secret}", handle


def parse_key(key: str) -> ParsedKey | None:
    """The mode and handle of a well-formed key; None for anything else."""
    match = _KEY.match(key)
    if match is None:
        return None
    return ParsedKey(mode=match.group(1), handle=match.group(2))  # type: ignore[arg-type]


def key_digest(secret: bytes, key: str) -> bytes:
    return hmac.digest(secret, key.encode(), "sha256")  # the one-shot C path: every keyed call runs it


def digest_matches(secret: bytes, key: str, stored: bytes | None) -> bool:
    """Constant-time check of a presented key against a stored digest (None: no such row)."""
    presented = key_digest(secret, key)
    return hmac.compare_digest(presented, stored if stored is not None else _DUMMY_DIGEST) and stored is not None


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` value; None when absent or another scheme."""
    if authorization is None:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip() or None
