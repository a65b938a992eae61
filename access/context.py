"""Who is calling and what the call counted against. Pure.

The access middleware puts one `Access` in `scope["state"]["access"]` for every metered request;
routes read it with `access_of(request)` (status reports it; wire tickets check `caller.mode`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import msgspec

from access.periods import Period
from access.plans import Mode
from access.window import RateState

Credential = Literal["anonymous", "key"]


@dataclass(frozen=True)
class Caller:
    credential: Credential
    mode: Mode  # also the dataset read: test keys read the sandbox
    plan: str
    account_id: str | None
    key_id: str | None
    scopes: frozenset[str]
    subject: str  # whose windows and allowance: `acct_...`, or `addr:` + a keyed hash of the address
    billing_anchor_day: int | None = None  # accounts only
    cached: bool = False  # a key read from the in-process cache (not from the database for this call)


class CreditState(msgspec.Struct, frozen=True):  # made on every metered call: cheap to make
    """Status's `credits`, after this call."""

    used: int
    remaining: int
    last: int  # charged for this call
    allowance: int
    period: Period
    reset_after: int  # seconds until the period ends

    @property
    def reset(self) -> int:
        return self.period.reset


def credit_state(allowance: int, used: int, last: int, period: Period, now: datetime | float) -> CreditState:
    """`now`: a datetime, or Unix seconds."""
    wall = now if isinstance(now, float) else now.timestamp()
    return CreditState(
        used=used,
        remaining=max(0, allowance - used),
        last=last,
        allowance=allowance,
        period=period,
        reset_after=max(0, math.ceil(period.end_ts - wall)),
    )


@dataclass
class Access:
    caller: Caller
    operation: str
    rate: RateState | None = None
    credits: CreditState | None = None  # None: no database to count against


def access_of(request: Any) -> Access | None:
    """The request's access record (None on routes outside access control, such as /health)."""
    return request.scope.get("state", {}).get("access")
