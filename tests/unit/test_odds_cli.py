"""`svc calc`: one JSON object with --json, American odds after --odds, clear errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str):
    return CliRunner().invoke(app, ["calc", *args])


def test_devig_json_is_exactly_the_documented_object():
    result = run("devig", "--method", "multiplicative", "--odds", "-110", "-110", "--format", "american", "--json")
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert list(printed) == ["method", "probabilities", "fair_odds", "overround", "hold", "parameter"]
    assert printed["probabilities"] == [0.5, 0.5]
    assert round(printed["overround"], 6) == 0.047619
    assert round(printed["hold"], 6) == 0.045455
    assert printed["parameter"] is None


def test_american_prices_starting_with_minus_work_in_any_position():
    result = run("devig", "--odds", "-150", "+130", "--method", "shin", "--format", "american", "--json")
    assert result.exit_code == 0, result.output
    p = json.loads(result.stdout)["probabilities"]
    assert p[0] > p[1] and abs(sum(p) - 1) < 1e-12


def test_probabilities_keep_input_order():
    forward = json.loads(run("devig", "--odds", "1.35", "5.25", "8.5", "--method", "power", "--json").stdout)
    backward = json.loads(run("devig", "--odds", "8.5", "5.25", "1.35", "--method", "power", "--json").stdout)
    assert forward["probabilities"] == list(reversed(backward["probabilities"]))


@pytest.mark.parametrize("args, words", [
    (["devig", "--odds", "-110", "50", "--format", "american", "--json"], "odds[1]"),
    (["devig", "--odds", "2.1", "abc", "--json"], "not a number"),
    (["devig", "--odds", "2.1", "2.0", "--method", "magic", "--json"], "method"),
    (["devig", "--json"], "prices"),
    (["convert", "--odds", "0.9", "--json"], "above 1"),
    (["payout", "--odds", "2", "--stake", "-5"], "stake"),
    (["parlay", "--odds", "2", "3:maybe", "--stake", "5"], "status"),
    (["kelly", "--odds", "2", "--probability", "1.5"], "probability"),
    (["middle", "--kind", "total", "--first", "over", "44.5", "2", "10", "--second", "over", "47.5", "2", "10"], "side"),
    (["clv", "--taken", "2.1"], "closing_probability"),
])
def test_bad_input_exits_non_zero_with_a_message_and_no_traceback(args, words):
    result = run(*args)
    assert result.exit_code != 0
    assert words in result.output
    assert "Traceback" not in result.output
    assert result.stdout == ""  # nothing half-printed on stdout


@pytest.mark.parametrize("args, key", [
    (["convert", "--odds", "-110", "--format", "american"], "fractional"),
    (["payout", "--odds", "5/2", "--stake", "20", "--format", "fractional"], "payout"),
    (["parlay", "--odds", "-110", "+150", "-200:push", "--stake", "10", "--format", "american"], "legs_removed"),
    (["ev", "--odds", "2.1", "--probability", "0.52", "--stake", "100"], "expected_value"),
    (["kelly", "--odds", "2.1", "--probability", "0.52", "--fraction", "0.5", "--bankroll", "1000"], "stake"),
    (["arbitrage", "--odds", "2.12", "1.95", "--stake", "100"], "stakes"),
    (["middle", "--kind", "total", "--first", "over", "44.5", "-110", "110", "--second", "under", "47.5", "-110", "110",
      "--format", "american"], "middle_outcomes"),
    (["clv", "--taken", "2.1", "--closing-odds", "1.87", "2.02", "--selection", "1", "--method", "power"], "clv"),
    (["clv", "--taken", "-105", "--closing-probability", "0.54", "--format", "american"], "beat_close"),
])
def test_every_command_prints_one_json_object(args, key):
    result = run(*args, "--json")
    assert result.exit_code == 0, result.output
    assert result.stdout.count("\n") == 1
    assert key in json.loads(result.stdout)


def test_values_match_hand_computation():
    payout = json.loads(run("payout", "--odds", "5/2", "--stake", "20", "--format", "fractional", "--json").stdout)
    assert payout["payout"] == 70 and payout["profit"] == 50
    parlay = json.loads(run("parlay", "--odds", "-110", "+150", "-200:push", "--stake", "10", "--format", "american",
                            "--json").stdout)
    assert parlay["decimal_odds"] == pytest.approx(21 / 11 * 2.5, abs=1e-12)
    kelly = json.loads(run("kelly", "--odds", "2.1", "--probability", "0.52", "--json").stdout)
    assert kelly["full_fraction"] == pytest.approx((0.52 * 2.1 - 1) / 1.1, abs=1e-12)


def test_table_output_shows_formula_and_rg_line():
    result = run("devig", "--odds", "2.7", "2.3", "4.4", "--method", "odds_ratio")
    assert result.exit_code == 0
    assert "devig.odds_ratio@1" in result.stdout and "1-800-MY-RESET" in result.stdout


def test_the_installed_command_accepts_american_odds():
    """Through a real process and argv, as a user types it."""
    svc = Path(sys.executable).with_name("svc")
    completed = subprocess.run(
        [str(svc), "calc", "devig", "--method", "shin", "--odds", "-110", "-110", "--format", "american", "--json"],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    printed = json.loads(completed.stdout)
    assert printed["probabilities"] == [0.5, 0.5] and round(printed["hold"], 6) == 0.045455
    bad = subprocess.run([str(svc), "calc", "devig", "--odds", "-99", "-110", "--format", "american"],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert bad.returncode == 1 and "odds[0]" in bad.stderr and "Traceback" not in bad.stderr
