"""The plan table (access/plans.py), number for number."""

from __future__ import annotations

from access.plans import ACCOUNT_PLANS, BASE_SCOPES, KEY_ONLY_SCOPES, PLANS, SCOPES, parse_scopes, scopes_refused


def test_limits_and_allowances_are_the_spec_table():
    table = {
        name: (p.credits, p.credit_period, p.rate_limit, p.rate_window, p.rate_per_operation, p.wire_connections, p.wire_topics)
        for name, p in PLANS.items()
    }
    assert table == {
        "anonymous": (200, "day", 60, 600, True, 2, 20),
        "free": (6_000, "month", 120, 60, False, 3, 50),
        "pro": (25_000, "month", 300, 60, False, 5, 200),
        "developer": (100_000, "month", 600, 60, False, 10, 500),
        "scale": (1_000_000, "month", 3000, 60, False, 100, 5_000),
    }
    assert ACCOUNT_PLANS == ("free", "pro", "developer", "scale")


def test_scopes_per_plan_follow_spec_5_7():
    assert BASE_SCOPES == {"read:odds", "read:players", "read:reference", "run:answers", "wire:connect"}
    for plan in ("free", "developer", "scale"):
        assert PLANS[plan].scopes == BASE_SCOPES
    assert PLANS["pro"].scopes == SCOPES  # league, tracker and simulation scopes: Pro only
    assert PLANS["anonymous"].scopes == frozenset()
    assert KEY_ONLY_SCOPES == {"run:answers", "wire:connect"}


def test_scopes_refused_names_what_the_plan_may_not_hold():
    assert scopes_refused("free", {"read:odds", "read:league", "bogus:scope"}) == ["bogus:scope", "read:league"]
    assert scopes_refused("pro", {"read:league", "run:simulation", "read:odds"}) == []
    assert scopes_refused("scale", {"read:tracker"}) == ["read:tracker"]


def test_parse_scopes_accepts_commas_and_spaces():
    assert parse_scopes("read:odds,read:players") == {"read:odds", "read:players"}
    assert parse_scopes(" read:odds ,  run:answers ") == {"read:odds", "run:answers"}
    assert parse_scopes("") == set()
