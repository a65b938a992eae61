"""Plans, scopes and limits. Pure: the one table every access decision reads.

Every number lives here: change it here and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

PlanName = Literal["anonymous", "free", "pro", "developer", "scale"]
Mode = Literal["live", "test"]
MODES: tuple[Mode, ...] = ("live", "test")

# every paid plan may hold these ...
BASE_SCOPES = frozenset({"read:odds", "read:players", "read:reference", "run:answers", "wire:connect"})
# ... and these only Pro (the published plan table names Pro alone; we follow it to the letter)
PRO_SCOPES = frozenset({"read:league", "read:tracker", "run:simulation"})
SCOPES = BASE_SCOPES | PRO_SCOPES

# operations that need a key even though any key-less caller may reach the others.
# A route may also say so itself with opt {"credential": "key"}.
KEY_ONLY_SCOPES = frozenset({"run:answers", "wire:connect"})

# The scope that reads each kind of resource: the one mapping REST routes, wire
# ticket minting and the Wire's subscribe and resume all read, so a topic never needs less than
# its REST twin (a market topic needs `read:odds`, like GET /v1/markets/{id}). A Wire topic's
# kind is the part before its colon (`market:mkt_…`).
READ_SCOPES: dict[str, str] = {
    "game": "read:odds",
    "market": "read:odds",
    "player": "read:players",
    "reference": "read:reference",
    "answer": "run:answers",
}


def topic_scope(topic: str) -> str | None:
    """The scope a Wire topic needs (that of its REST twin); None for a kind not served."""
    return READ_SCOPES.get(topic.partition(":")[0])


# operations outside access control: health answers load balancers, never 401/429
UNMETERED_OPERATIONS = frozenset({"health"})


@dataclass(frozen=True)
class Plan:
    name: PlanName
    credits: int  # allowance per credit period
    credit_period: Literal["day", "month"]  # anonymous: UTC day; accounts: billing month
    rate_limit: int  # calls admitted in any `rate_window` seconds
    rate_window: int
    rate_per_operation: bool  # anonymous: one window per address per operation; accounts: one for all
    wire_connections: int
    wire_topics: int
    scopes: frozenset[str]


PLANS: dict[str, Plan] = {
    "anonymous": Plan("anonymous", 200, "day", 60, 600, True, 2, 20, frozenset()),
    "free": Plan("free", 6_000, "month", 120, 60, False, 3, 50, BASE_SCOPES),
    "pro": Plan("pro", 25_000, "month", 300, 60, False, 5, 200, BASE_SCOPES | PRO_SCOPES),
    "developer": Plan("developer", 100_000, "month", 600, 60, False, 10, 500, BASE_SCOPES),
    "scale": Plan("scale", 1_000_000, "month", 3000, 60, False, 100, 5_000, BASE_SCOPES),
}
ACCOUNT_PLANS: tuple[str, ...] = ("free", "pro", "developer", "scale")


def scopes_refused(plan: str, scopes: set[str] | frozenset[str]) -> list[str]:
    """The requested scopes this plan's keys may not hold (unknown scopes included), sorted."""
    allowed = PLANS[plan].scopes
    return sorted(s for s in scopes if s not in allowed)


def parse_scopes(text: str) -> set[str]:
    """`read:odds, read:players` (commas and/or spaces) -> a set; empty text -> no scopes."""
    return {part for part in text.replace(",", " ").split() if part}
