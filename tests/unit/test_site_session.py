"""The first-party page's session cookie (access/site_session.py): signed, expiring, its
attributes as a browser must keep it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from access.site_session import (
    COOKIE, SESSION_SECONDS, cookie_value, needs_renewal, new_session, session_id_of, set_cookie,
)

SECRET = b"s" * 32
NOW = 1_790_000_000.0


def test_a_new_session_is_valid_for_its_lifetime_only():
    value = new_session(SECRET, NOW)
    sid = session_id_of(SECRET, value, NOW)
    assert sid is not None and len(sid) >= 20
    assert session_id_of(SECRET, value, NOW + SESSION_SECONDS - 1) == sid
    assert session_id_of(SECRET, value, NOW + SESSION_SECONDS) is None  # expired
    assert session_id_of(SECRET, value, NOW - 1) is None  # issued in the future
    assert session_id_of(b"another secret", value, NOW) is None
    assert new_session(SECRET, NOW) != value  # every page load, a session of its own


def test_an_altered_cookie_is_refused():
    version, sid, issued, tag = new_session(SECRET, NOW).split(".")
    assert session_id_of(SECRET, ".".join((version, sid, str(int(issued) + 3600), tag)), NOW + 3600) is None
    assert session_id_of(SECRET, ".".join((version, sid[::-1], issued, tag)), NOW) is None
    assert session_id_of(SECRET, ".".join((version, sid, issued, tag[:-2] + "AA")), NOW) is None
    assert session_id_of(SECRET, None, NOW) is None and session_id_of(SECRET, "", NOW) is None


@given(st.text(max_size=120))
def test_any_text_is_refused_without_error(text):
    assert session_id_of(SECRET, text, NOW) is None


def test_renewal_in_the_second_half_of_its_life():
    value = new_session(SECRET, NOW)
    assert not needs_renewal(value, NOW + SESSION_SECONDS / 2 - 1)
    assert needs_renewal(value, NOW + SESSION_SECONDS / 2)


def test_the_cookie_is_http_only_same_site_strict_and_secure_over_tls():
    plain = set_cookie("v", secure=False).split("; ")
    assert plain[0] == f"{COOKIE}=v" and {"HttpOnly", "SameSite=Strict", "Path=/site"} <= set(plain)
    assert f"Max-Age={SESSION_SECONDS}" in plain and "Secure" not in plain
    assert "Secure" in set_cookie("v", secure=True).split("; ")


def test_the_cookie_is_read_from_a_cookie_header():
    assert cookie_value(f"a=1; {COOKIE}=s1.x.1.t; b=2") == "s1.x.1.t"
    assert cookie_value("a=1") is None and cookie_value(None) is None
    assert cookie_value(f"x{COOKIE}=1") is None
