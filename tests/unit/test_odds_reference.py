"""Our maths against reference values computed once by penaltyblog 1.13.1, an independent
implementation (see fixtures/odds_reference_README.md). Tolerance 1e-6, Shin 1e-4."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from domain import bets, prices
from domain.devig import devig_floats
from domain.devig import devig
from domain.exact import exact

REFERENCE = json.loads((Path(__file__).parent / "fixtures" / "odds_reference.json").read_text())
DEVIG = REFERENCE["devig"]


def tolerance(method: str) -> float:
    return 1e-4 if method == "shin" else 1e-6


def case_id(case: dict) -> str:
    return f"{case['label']}-{case['method']}"


def test_the_reference_covers_every_method_on_two_and_three_way_markets():
    assert REFERENCE["generator"]["package"] == "penaltyblog"
    for method in ("multiplicative", "additive", "power", "shin", "odds_ratio"):
        sizes = {len(c["odds"]) for c in DEVIG if c["method"] == method}
        assert {2, 3} <= sizes


@pytest.mark.parametrize("case", DEVIG, ids=case_id)
def test_devig_exact_matches(case):
    odds = [prices.to_decimal(o, case["format"]) for o in case["odds"]]
    result = devig(case["method"], odds)
    tol = tolerance(case["method"])
    assert [float(p) for p in result.probabilities] == pytest.approx(case["probabilities"], abs=tol)
    assert float(result.overround) == pytest.approx(case["margin"], abs=1e-9)
    if case["parameter"] is not None:  # penaltyblog's k, z and c mean what ours mean
        assert float(result.parameter) == pytest.approx(case["parameter"], abs=tol)


@pytest.mark.parametrize("case", DEVIG, ids=case_id)
def test_devig_hot_path_matches(case):
    odds = [float(prices.to_decimal(o, case["format"])) for o in case["odds"]]
    result = devig_floats(case["method"], odds)
    assert result.probabilities == pytest.approx(case["probabilities"], abs=tolerance(case["method"]))


@pytest.mark.parametrize("case", DEVIG, ids=case_id)
def test_cli_devig_json_matches(case):
    """`svc calc devig --json`, as the issue checks it."""
    result = CliRunner().invoke(
        app, ["calc", "devig", "--method", case["method"], "--odds", *case["odds"], "--format", case["format"], "--json"]
    )
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert set(printed) == {"method", "probabilities", "fair_odds", "overround", "hold", "parameter"}
    tol = tolerance(case["method"])
    assert printed["method"] == case["method"]
    assert printed["probabilities"] == pytest.approx(case["probabilities"], abs=tol)
    assert printed["overround"] == pytest.approx(case["margin"], abs=1e-9)
    total = 1 + case["margin"]
    assert printed["hold"] == pytest.approx(1 - 1 / total, abs=1e-9)
    assert printed["fair_odds"] == pytest.approx([1 / p for p in case["probabilities"]], rel=tol)


@pytest.mark.parametrize("case", REFERENCE["conversions"], ids=lambda c: c["format"])
def test_conversions_match(case):
    ours = [float(prices.to_decimal(o, case["format"])) for o in case["odds"]]
    assert ours == pytest.approx(case["decimal"], abs=1e-12)


@pytest.mark.parametrize("case", REFERENCE["kelly"], ids=lambda c: f"{c['odds']}-{c['probability']}-{c['fraction']}")
def test_kelly_matches(case):
    result = bets.kelly(exact(case["odds"]), exact(case["probability"]), exact(case["fraction"]))
    assert float(result.stake_fraction) == pytest.approx(case["stake"], abs=1e-9)
    assert float(result.edge) == pytest.approx(case["edge"], abs=1e-9)


@pytest.mark.parametrize("case", REFERENCE["ev"], ids=lambda c: f"{c['odds']}-{c['probability']}")
def test_expected_value_matches(case):
    result = bets.expected_value(exact(case["odds"]), exact(case["probability"]))
    assert float(result.edge) == pytest.approx(case["ev_per_unit"], abs=1e-9)
    assert float(result.expected_value) == pytest.approx(case["ev_per_unit"], abs=1e-9)


@pytest.mark.parametrize("case", REFERENCE["arbitrage"], ids=lambda c: "/".join(c["odds"]))
def test_arbitrage_matches(case):
    total = Fraction(100)
    result = bets.arbitrage([exact(o) for o in case["odds"]], total)
    assert result.is_arbitrage == case["has_arbitrage"]
    assert float(result.booksum) == pytest.approx(case["total_implied_probability"], abs=1e-12)
    if case["has_arbitrage"]:  # penaltyblog gives shares and return only for a real arbitrage
        assert [float(s / total) for s in result.stakes] == pytest.approx(case["stake_shares"], abs=1e-12)
        assert float(result.roi) == pytest.approx(case["guaranteed_return"], abs=1e-12)
