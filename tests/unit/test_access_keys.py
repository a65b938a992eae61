"""Key format, parsing, keyed hashes and the bearer header."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from access.keys import HANDLE_LENGTH, SECRET_LENGTH, bearer_token, digest_matches, key_digest, new_key, parse_key
from domain.ids import ALPHABET

SECRET = b"server-secret"


def test_new_keys_have_the_spec_prefix_and_240_random_bits():
    for mode in ("live", "test"):
        key, handle = new_key(mode)
        assert re.fullmatch(rf"svc_{mode}_[{ALPHABET}]{{48}}", key)
        assert key[len(f"svc_{mode}_"):].startswith(handle) and len(handle) == HANDLE_LENGTH
        parsed = parse_key(key)
        assert parsed is not None and parsed.mode == mode and parsed.handle == handle
    # 32 symbols each carry 5 bits: 16 handle + 32 secret characters
    assert (HANDLE_LENGTH + SECRET_LENGTH) * 5 == 240
    keys = {new_key("live")[0] for _ in range(2000)}
    assert len(keys) == 2000


@given(st.text(max_size=80))
def test_anything_not_a_key_parses_to_none(text):
    if not re.fullmatch(rf"svc_(live|test)_[{ALPHABET}]{{48}}", text):
        assert parse_key(text) is None


def test_near_misses_are_malformed():
    key, _ = new_key("live")
    assert parse_key(key + "a") is None
    assert parse_key(key[:-1]) is None
    assert parse_key(key.upper()) is None
    assert parse_key(key.replace("svc_live_", "svc_prod_")) is None
    assert parse_key(" " + key) is None


def test_digest_is_keyed_and_compared_whole():
    key, _ = new_key("test")
    stored = key_digest(SECRET, key)
    assert len(stored) == 32 and key.encode() not in stored
    assert digest_matches(SECRET, key, stored)
    assert not digest_matches(b"another-secret", key, stored)
    other = key[:-1] + ("0" if key[-1] != "0" else "1")
    assert not digest_matches(SECRET, other, stored)
    assert not digest_matches(SECRET, key, None)  # no row: still a full comparison, still False


def test_bearer_token():
    assert bearer_token(None) is None
    assert bearer_token("Bearer abc") == "abc"
    assert bearer_token("bearer   abc  ") == "abc"
    assert bearer_token("Basic dXNlcjpwYXNz") is None
    assert bearer_token("Bearer") is None
    assert bearer_token("") is None
