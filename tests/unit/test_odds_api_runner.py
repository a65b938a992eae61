"""The runner behind the calculations API and `svc calc` (calc.run): refusals, rounding, card
citations; and the API's use of it (api.calc_problems), which answers a refusal as a problem."""

from __future__ import annotations

from fractions import Fraction

import msgspec
import pytest

from api import calc_problems
from api.problems import ProblemError
from calc import run as calc_run
from calc.run import Refused
from domain import devig as margin
from schemas.cost_line import RG_LINE


def run(name: str, body: dict):
    return calc_run.calculate(name, calc_run.decode(name, msgspec.json.encode(body)))


def test_a_solver_failure_is_calc_not_available_never_a_silent_result(monkeypatch):
    real = margin.devig

    def failing(method, odds):
        result = real(method, odds)
        return margin.Devig(
            result.method, result.probabilities, result.parameter, result.overround, result.hold,
            result.in_range, False, ("The power solver did not reach |sum - 1| <= 1e-12.",),
        )

    monkeypatch.setattr(margin, "devig", failing)
    with pytest.raises(Refused) as info:
        run("devig", {"odds": [2.1, 3.4, 3.6], "method": "power"})
    assert info.value.code == "calc_not_available" and info.value.param == "method"
    assert "did not reach" in info.value.detail


def test_refused_inputs_become_invalid_inputs_naming_the_field():
    with pytest.raises(Refused) as info:
        run("parlay", {"legs": [{"odds": -110}, {"odds": 99}], "stake": 10, "format": "american"})
    assert info.value.code == "invalid_inputs" and info.value.param == "legs[1].odds"
    assert "legs[1].odds" in info.value.detail and "American odds" in info.value.detail


def test_results_are_rounded_half_even_at_12_places():
    result = run("devig", {"odds": [3, 3, 3]}).result
    assert result.probabilities == [0.333333333333] * 3  # 1/3, not 0.3333333333333333
    assert run("payout", {"odds": "1/3", "stake": 1, "format": "fractional"}).result.profit == 0.333333333333
    # ties at the 13th place go to the even neighbour: 5e-13 -> 0, 1.5e-12 -> 2e-12
    assert run("ev", {"odds": 2, "probability": "0.50000000000025"}).result.edge == 0.0
    assert run("ev", {"odds": 2, "probability": "0.50000000000075"}).result.edge == 2e-12


def test_every_result_cites_its_cards_and_carries_rg_line():
    response = run("clv", {"taken_odds": -105, "closing_odds": [-120, 100], "selection": 1, "method": "shin",
                           "format": "american"})
    assert response.formula == "bet.clv@1"
    assert response.formulas == ["bet.clv@1", "devig.shin@1", "odds.convert@1"]
    assert response.rg_line == RG_LINE


def test_clv_from_closing_odds_uses_the_devigged_probability():
    by_odds = run("clv", {"taken_odds": 2.1, "closing_odds": [1.87, 2.02], "selection": 1, "method": "multiplicative"})
    p = Fraction(100, 202) / (Fraction(100, 187) + Fraction(100, 202))
    assert by_odds.result.closing_probability == pytest.approx(float(p), abs=1e-12)
    assert by_odds.result.clv == pytest.approx(float(Fraction(21, 10) * p - 1), abs=1e-12)


def test_parlay_of_void_legs_has_no_american_price():
    result = run("parlay", {"legs": [{"odds": 2, "status": "void"}, {"odds": 3, "status": "push"}], "stake": 5}).result
    assert result.decimal_odds == 1 and result.american_odds is None and result.payout == 5


def test_the_api_answers_a_refusal_as_the_problem_of_the_same_code_detail_and_param():
    body = {"legs": [{"odds": -110}, {"odds": 99}], "stake": 10, "format": "american"}
    with pytest.raises(Refused) as refused:
        run("parlay", body)
    with pytest.raises(ProblemError) as problem:
        calc_problems.calculate("parlay", calc_run.decode("parlay", msgspec.json.encode(body)))
    assert (problem.value.code, problem.value.detail, problem.value.param) == (
        refused.value.code, refused.value.detail, refused.value.param)
    assert problem.value.status == 422

