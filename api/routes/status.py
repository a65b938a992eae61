"""GET /v1/status: how the caller was identified and what this call counted against."""

from __future__ import annotations

import msgspec
from litestar import Request, get

from access.context import access_of
from access.headers import policy_item
from api.front import API_VERSION
from api.openapi import problem_responses


class RateWindow(msgspec.Struct, kw_only=True):
    policy: str  # as in RateLimit-Policy
    limit: int
    remaining: int
    window_seconds: int
    reset: int  # Unix seconds
    resource: str  # operation name or `all`


class Credits(msgspec.Struct, kw_only=True):
    used: int  # including this call
    remaining: int
    last: int  # cost of this call (0 for status)
    allowance: int
    period: str  # `dYYYYMMDD` (key-less UTC day) or `mYYYYMMDD` (billing period)
    reset: int  # Unix seconds


class Status(msgspec.Struct, kw_only=True):
    object: str
    ok: bool
    api_version: str
    credential: str
    mode: str
    plan: str
    account_id: str | None
    scopes: list[str]
    rate: RateWindow | None
    credits: Credits | None


@get(
    "/v1/status",
    summary="How this call was identified, and its rate window and credits",
    description=(
        "Works with or without a key; costs 0 credits and is never refused for quota. "
        "The same values are in the RateLimit, RateLimit-Policy, X-RateLimit-* and X-Credits-* headers."
    ),
    responses=problem_responses("unauthenticated", "method_not_allowed", "rate_limited", "service_unavailable"),
    opt={"operation": "status", "scope": None, "price": 0},
    tags=["status"],
)
async def status(request: Request) -> Status:
    access = access_of(request)
    if access is None:  # only if the access middleware were not installed
        raise RuntimeError("GET /v1/status needs the access middleware")
    caller, rate, credits = access.caller, access.rate, access.credits
    return Status(
        object="status",
        ok=True,
        api_version=API_VERSION,
        credential=caller.credential,
        mode=caller.mode,
        plan=caller.plan,
        account_id=caller.account_id,
        scopes=sorted(caller.scopes),
        rate=None if rate is None else RateWindow(
            policy=policy_item(rate.policy), limit=rate.policy.limit, remaining=rate.remaining,
            window_seconds=rate.policy.window, reset=rate.reset_at, resource=rate.resource,
        ),
        credits=None if credits is None else Credits(
            used=credits.used, remaining=credits.remaining, last=credits.last, allowance=credits.allowance,
            period=credits.period.label, reset=credits.reset,
        ),
    )


ROUTES = [status]
