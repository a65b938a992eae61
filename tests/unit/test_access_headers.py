"""Rate-limit and credit headers: draft-ietf-httpapi-ratelimit-headers-10 and the X- fields."""

from __future__ import annotations

import re
from datetime import datetime, timezone

from access.context import credit_state
from access.headers import access_headers, policy_item, retry_after
from access.periods import day_period
from access.window import LogReading, RatePolicy, rate_state

# draft-10: a Structured Fields List of Items whose value is a String, with key=integer parameters
_ITEM = r'"[a-z0-9-]+"(;[a-z][a-z0-9_.*-]*=\d+)+'
_LIST = re.compile(rf"^{_ITEM}(, {_ITEM})*$")


def test_headers_of_an_anonymous_priced_call():
    now = datetime(2026, 11, 22, 4, 40, tzinfo=timezone.utc)
    rate = rate_state(RatePolicy("anonymous", 60, 600), "games.list", LogReading(True, 3, now.timestamp() - 100, now.timestamp()))
    credits = credit_state(200, 7, 1, day_period(now), now)
    headers = dict(access_headers("anonymous", rate, credits))
    assert headers == {
        "RateLimit-Policy": '"anonymous";q=60;w=600, "anonymous-credits";q=200;w=86400',
        "RateLimit": f'"anonymous";r=57;t=500, "anonymous-credits";r=193;t={19 * 3600 + 20 * 60}',
        "X-RateLimit-Limit": "60",
        "X-RateLimit-Remaining": "57",
        "X-RateLimit-Reset": str(int(now.timestamp()) + 500),
        "X-RateLimit-Resource": "games.list",
        "X-Credits-Used": "7",
        "X-Credits-Remaining": "193",
        "X-Credits-Last": "1",
    }
    assert _LIST.match(headers["RateLimit-Policy"]) and _LIST.match(headers["RateLimit"])
    assert policy_item(rate.policy) == '"anonymous";q=60;w=600'


def test_without_credits_only_the_rate_window_is_advertised():
    rate = rate_state(RatePolicy("pro", 300, 60), "all", LogReading(True, 1, 50.0, 50.0))
    headers = dict(access_headers("pro", rate, None))
    assert headers["RateLimit-Policy"] == '"pro";q=300;w=60'
    assert headers["RateLimit"] == '"pro";r=299;t=60'
    assert not any(k.startswith("X-Credits") for k in headers)


def test_retry_after_is_never_zero():
    assert retry_after(0) == ("Retry-After", "1")
    assert retry_after(42) == ("Retry-After", "42")
