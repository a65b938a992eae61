"""Wire topic names and ticket URLs: pure rules."""

from __future__ import annotations

import re

from hypothesis import given, strategies as st

from api.routes.wire_tickets import ticket_url
from wire.topics import TOPIC_MAX_LENGTH, distinct_topics, topic_error

_TAIL = st.text(alphabet="abcXYZ019_-/:", min_size=1, max_size=40)


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=10), _TAIL)
def test_well_formed_topics_are_accepted(kind, rest):
    assert topic_error(f"{kind}:{rest}") is None


@given(st.text(max_size=60))
def test_a_topic_is_accepted_exactly_when_it_matches_the_spec_rule(topic):
    ok = re.fullmatch(r"[a-z]+:[A-Za-z0-9_\-/:]+", topic) is not None and len(topic) <= TOPIC_MAX_LENGTH
    assert (topic_error(topic) is None) == ok


def test_bad_topics_say_why():
    assert topic_error("game:" + "a" * TOPIC_MAX_LENGTH) is not None  # 205 characters
    for bad in ("", "game", "Game:gm_1", ":gm_1", "game:", "game:gm 1", "gäme:x", "game:gm_1\n"):
        assert topic_error(bad) is not None, bad


@given(st.lists(st.sampled_from(["game:a", "game:b", "market:c", "market:d"]), max_size=12))
def test_distinct_topics_keep_first_order_and_drop_repeats(topics):
    out = distinct_topics(topics)
    assert len(out) == len(set(topics))
    assert out == sorted(set(topics), key=topics.index)


def test_ticket_urls():
    assert ticket_url("http://h:8000/", "ws", None) == "ws://h:8000/v1/wire"
    assert ticket_url("https://api.example.com", "ws", ["game:x"]) == "wss://api.example.com/v1/wire"
    assert ticket_url("https://api.example.com", "sse", ["market:m/1"]) == "https://api.example.com/v1/stream/market:m/1"
    assert ticket_url("https://api.example.com", "sse", ["a:1", "b:2"]) == "https://api.example.com/v1/stream/{topic}"
