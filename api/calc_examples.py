"""OpenAPI examples of each calculation: a request, and the response computed from it by the very
code that serves it (so the documented numbers are always the served ones)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec

from calc.run import calculate, decode

EXAMPLE_TIME = datetime(2026, 10, 5, 12, 0, tzinfo=UTC)

REQUESTS: dict[str, dict[str, Any]] = {
    "convert": {"price": -110, "format": "american"},
    "devig": {"odds": [-110, -110], "method": "shin", "format": "american"},
    "payout": {"odds": "5/2", "stake": 20, "format": "fractional"},
    "parlay": {"legs": [{"odds": -110}, {"odds": 150}, {"odds": -200, "status": "push"}], "stake": 10, "format": "american"},
    "ev": {"odds": 2.1, "probability": 0.52, "stake": 100},
    "kelly": {"odds": 2.1, "probability": 0.52, "fraction": 0.5, "cap": 0.05, "bankroll": 1000},
    "arbitrage": {"odds": [2.12, 1.95], "stake": 100},
    "middle": {
        "kind": "total",
        "positions": [
            {"side": "over", "line": 44.5, "odds": -110, "stake": 110},
            {"side": "under", "line": 47.5, "odds": -110, "stake": 110},
        ],
        "format": "american",
    },
    "clv": {"taken_odds": 2.1, "closing_odds": [1.87, 2.02], "selection": 1, "method": "power"},
}

SUMMARIES = {
    "convert": "-110 American in every format",
    "devig": "A -110/-110 line, Shin's method",
    "payout": "20 at 5/2",
    "parlay": "Three legs, one pushed",
    "ev": "A 52% chance at 2.1",
    "kelly": "Half Kelly, capped at 5% of 1,000",
    "arbitrage": "2.12 and 1.95 at two books",
    "middle": "Over 44.5 and under 47.5",
    "clv": "2.1 taken, closing 1.87/2.02 (power)",
}


def request_example(name: str) -> dict[str, Any]:
    return REQUESTS[name]


def response_example(name: str) -> dict[str, Any]:
    request = decode(name, msgspec.json.encode(REQUESTS[name]))
    return msgspec.to_builtins(calculate(name, request, as_of=EXAMPLE_TIME))
