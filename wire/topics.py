"""Wire topic names. Pure.

A topic is lower-case letters, a colon, then letters, digits and `_ - / :`, at most 200
characters. The forms served are `{kind}:{ID}` for the kinds of `schemas.wire.TOPIC_KINDS`
(`game:gm_…`, `market:mkt_…`, `answer:ans_…`). Whether a caller may open a topic is decided when it is opened
(entitlement), not here.
"""

from __future__ import annotations

import re

TOPIC_MAX_LENGTH = 200
TOPIC_PATTERN = r"[a-z]+:[A-Za-z0-9_\-/:]+"
_TOPIC = re.compile(TOPIC_PATTERN)


def topic_error(topic: str) -> str | None:
    """Why `topic` is not a well-formed topic name, or None when it is."""
    if len(topic) > TOPIC_MAX_LENGTH:
        return f"a topic is at most {TOPIC_MAX_LENGTH} characters"
    if not _TOPIC.fullmatch(topic):
        return "a topic is lower-case letters, a colon, then letters, digits and '_ - / :' (e.g. 'game:gm_…')"
    return None


def distinct_topics(topics: list[str]) -> list[str]:
    """The topics in the order given, each once."""
    return list(dict.fromkeys(topics))
