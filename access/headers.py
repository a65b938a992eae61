"""Response headers for rate limits and credits. Pure.

`RateLimit-Policy` and `RateLimit` follow draft-ietf-httpapi-ratelimit-headers-10 exactly: each
field is a Structured Fields List of Items whose value is a String naming the policy, with
parameters `q` (quota) and `w` (window seconds) on the policy, `r` (remaining) and `t` (seconds
until more quota is available) on the service limit. Two policies are advertised: the plan's
rate window (named after the plan) and its credit allowance (`<plan>-credits`, one credit per
quota unit; `w` is the length of the current credit period).

The `X-RateLimit-*` fields repeat the rate window as status reports it (`rate`), with
`X-RateLimit-Reset` in Unix seconds; `X-Credits-*` repeat status's `credits`.
"""

from __future__ import annotations

from access.context import CreditState
from access.window import RatePolicy, RateState


def _sf_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def policy_item(policy: RatePolicy) -> str:
    """One RateLimit-Policy item, e.g. `"free";q=120;w=60` (also status's `rate.policy`)."""
    return f"{_sf_string(policy.name)};q={policy.limit};w={policy.window}"


def credits_policy_name(plan: str) -> str:
    return f"{plan}-credits"


def rate_headers(rate: RateState) -> list[tuple[str, str]]:
    return [
        ("X-RateLimit-Limit", str(rate.policy.limit)),
        ("X-RateLimit-Remaining", str(rate.remaining)),
        ("X-RateLimit-Reset", str(rate.reset_at)),
        ("X-RateLimit-Resource", rate.resource),
    ]


def credit_headers(credits: CreditState) -> list[tuple[str, str]]:
    return [
        ("X-Credits-Used", str(credits.used)),
        ("X-Credits-Remaining", str(credits.remaining)),
        ("X-Credits-Last", str(credits.last)),
    ]


def ratelimit_fields(plan: str, rate: RateState | None, credits: CreditState | None) -> list[tuple[str, str]]:
    policies: list[str] = []
    limits: list[str] = []
    if rate is not None:
        policies.append(policy_item(rate.policy))
        limits.append(f"{_sf_string(rate.policy.name)};r={rate.remaining};t={rate.reset_after}")
    if credits is not None:
        name = _sf_string(credits_policy_name(plan))
        policies.append(f"{name};q={credits.allowance};w={credits.period.seconds}")
        limits.append(f"{name};r={credits.remaining};t={credits.reset_after}")
    if not policies:
        return []
    return [("RateLimit-Policy", ", ".join(policies)), ("RateLimit", ", ".join(limits))]


def access_headers(plan: str, rate: RateState | None, credits: CreditState | None) -> list[tuple[str, str]]:
    """Every access header for a response, in a stable order."""
    out = ratelimit_fields(plan, rate, credits)
    if rate is not None:
        out += rate_headers(rate)
    if credits is not None:
        out += credit_headers(credits)
    return out


def retry_after(seconds: int) -> tuple[str, str]:
    """`Retry-After` in delta-seconds; at least 1 so a client never retries in a busy loop."""
    return ("Retry-After", str(max(1, seconds)))


def encoded(headers: list[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    """ASGI header pairs: names lower-cased, both as bytes (latin-1, as HTTP/1.1 carries them)."""
    return [(_LOWER.get(name) or name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers]


_LOWER = {name: name.lower().encode() for name in (
    "RateLimit-Policy", "RateLimit", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset",
    "X-RateLimit-Resource", "X-Credits-Used", "X-Credits-Remaining", "X-Credits-Last",
)}


_FIXED: dict[tuple, tuple[bytes, str, str]] = {}  # RateLimit-Policy and the two policy names, by what fixes them


def access_fields(plan: str, rate: RateState, credits: CreditState | None) -> list[tuple[bytes, bytes]]:
    """`encoded(access_headers(plan, rate, credits))` with less work: every metered response
    carries these, and all but the counts are fixed per plan and period."""
    if credits is None:
        return encoded(access_headers(plan, rate, credits))
    fixed_key = (plan, rate.policy, credits.allowance, credits.period.seconds)
    fixed = _FIXED.get(fixed_key)
    if fixed is None:
        if len(_FIXED) > 1024:
            _FIXED.clear()
        policy = ratelimit_fields(plan, rate, credits)[0][1].encode("latin-1")
        fixed = _FIXED[fixed_key] = (policy, _sf_string(rate.policy.name), _sf_string(credits_policy_name(plan)))
    policy, rate_name, credits_name = fixed
    return [
        (b"ratelimit-policy", policy),
        (b"ratelimit", f"{rate_name};r={rate.remaining};t={rate.reset_after}, "
                       f"{credits_name};r={credits.remaining};t={credits.reset_after}".encode("latin-1")),
        (b"x-ratelimit-limit", str(rate.policy.limit).encode()),
        (b"x-ratelimit-remaining", str(rate.remaining).encode()),
        (b"x-ratelimit-reset", str(rate.reset_at).encode()),
        (b"x-ratelimit-resource", rate.resource.encode("latin-1")),
        (b"x-credits-used", str(credits.used).encode()),
        (b"x-credits-remaining", str(credits.remaining).encode()),
        (b"x-credits-last", str(credits.last).encode()),
    ]


REALM = "svc"


def www_authenticate(code: str, param: str | None, credential_sent: bool) -> str | None:
    """The `WWW-Authenticate` challenge of an access refusal (RFC 9110 11.6.1: every 401 carries
    one; RFC 6750 3: the Bearer scheme's). No error code when no credential was sent (RFC 6750
    3.1 says so), `invalid_token` for one that was refused, `insufficient_scope` naming the
    scope on a 403 for a missing scope. None: the refusal is not about credentials."""
    if code == "unauthenticated":
        if not credential_sent:
            return f'Bearer realm="{REALM}"'
        return f'Bearer realm="{REALM}", error="invalid_token"'
    if code == "insufficient_scope" and param:
        return f'Bearer realm="{REALM}", error="insufficient_scope", scope={_sf_string(param)}'
    return None
