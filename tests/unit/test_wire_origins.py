"""Which browser origins may use which kind of wire ticket (wire/origins.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from wire.origins import KINDS, Origins

ORIGINS = Origins.of("https://dev.example", "https://svc.example, https://www.svc.example", "https://cards.example:8443")


def test_each_kind_uses_its_own_list():
    assert ORIGINS.allows("key", "https://dev.example")
    assert ORIGINS.allows("session", "HTTPS://WWW.SVC.EXAMPLE/")  # compared without case and trailing slash
    assert ORIGINS.allows("card", "https://cards.example:8443")
    assert not ORIGINS.allows("card", "https://cards.example")  # the port is part of an origin
    assert not ORIGINS.allows("key", "https://svc.example")
    assert not ORIGINS.allows("session", "https://dev.example")
    assert not ORIGINS.allows("unknown-kind", "https://dev.example")
    assert ORIGINS.any_allows("https://cards.example:8443") and not ORIGINS.any_allows("https://evil.example")
    assert ORIGINS.all() == {"https://dev.example", "https://svc.example", "https://www.svc.example",
                             "https://cards.example:8443"}


@given(st.sampled_from(KINDS), st.text(min_size=1, max_size=40))
def test_empty_lists_allow_no_browser_and_every_non_browser(kind, origin):
    none = Origins.of("", " , ", "")
    assert not none.allows(kind, origin) and not none.any_allows(origin)
    assert none.allows(kind, None) and none.any_allows(None)  # no Origin: not a browser


def test_the_apis_own_origin_may_use_session_tickets_only():
    own = ORIGINS.with_own(frozenset({"http://127.0.0.1:8000"}))
    assert own.allows("session", "http://127.0.0.1:8000") and own.allows("session", "https://svc.example")
    assert not own.allows("key", "http://127.0.0.1:8000") and not own.allows("card", "http://127.0.0.1:8000")
    assert own.any_allows("http://127.0.0.1:8000") and not ORIGINS.any_allows("http://127.0.0.1:8000")
