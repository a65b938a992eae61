"""Strategy checks on the caller's numbers (api/strategy_check.py, domain/strategy_checks.py):
the textbook results for any numbers (hypothesis), and the route each strategy takes."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from api.problems import ProblemError
from api.strategy_check import CheckRequest, run_check
from ingest.strategies import read_registry, registry_root
from domain.strategy_checks import read_input, run
from domain.strategy_programs import PROGRAMS

REGISTRY = {f.entry.slug: f.entry for f in read_registry(registry_root())[0]}
probabilities = st.fractions(min_value=Fraction(1, 100), max_value=Fraction(99, 100), max_denominator=1000)
prices = st.fractions(min_value=Fraction(101, 100), max_value=Fraction(50), max_denominator=100)


def check(slug: str, **body):
    return run_check(REGISTRY[slug], "stg_x", 1, CheckRequest(**body), None)


def figure(result, name):
    return next(f.value for f in result.figures if f.id == name)


@settings(max_examples=200, deadline=None)
@given(p=probabilities, d=prices)
def test_kelly_gives_the_textbook_fraction_and_declines_without_an_edge(p, d):
    r = check("kelly-criterion", inputs={"probability": f"{p.numerator}/{p.denominator}",
                                         "price": f"{d.numerator}/{d.denominator}", "bankroll": 1000})
    textbook = (p * d - 1) / (d - 1)
    assert figure(r, "full_fraction") == pytest.approx(float(textbook), abs=1e-12)
    if p * d > 1:
        assert r.route_taken == "execute" and r.stake.share == pytest.approx(float(textbook), abs=1e-12)
        assert r.on_fail == []
    else:
        assert r.route_taken == "decline" and r.stake.share == 0 and r.stake.amount == 0 and len(r.on_fail) == 1


@settings(max_examples=200, deadline=None)
@given(p=probabilities, d=prices, fraction=st.sampled_from(["0.25", "0.5", "1"]))
def test_fractional_kelly_scales_the_stake(p, d, fraction):
    r = check("fractional-kelly", inputs={"probability": f"{p.numerator}/{p.denominator}",
                                          "price": f"{d.numerator}/{d.denominator}", "fraction": fraction})
    assert figure(r, "stake_fraction") == pytest.approx(float(max(Fraction(0), (p * d - 1) / (d - 1)) * Fraction(fraction)),
                                                        abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(odds=st.lists(prices, min_size=2, max_size=6), total=st.integers(1, 10_000))
def test_arbitrage_found_exactly_when_the_booksum_is_below_one(odds, total):
    r = check("two-way-arbitrage", inputs={"prices": [f"{d.numerator}/{d.denominator}" for d in odds], "stake": total})
    booksum = sum(1 / d for d in odds)
    assert figure(r, "is_arbitrage") is (booksum < 1)
    assert r.route_taken == ("execute" if booksum < 1 else "decline")
    payouts = [s * float(d) for s, d in zip(figure(r, "stakes"), odds)]
    assert max(payouts) - min(payouts) < 1e-6 * total  # every outcome pays the same
    assert sum(figure(r, "stakes")) == pytest.approx(total)


@settings(max_examples=200, deadline=None)
@given(base=st.integers(1, 100), bankroll=st.integers(100, 100_000), p=probabilities)
def test_martingale_is_declined_and_counts_the_ruinous_run(base, bankroll, p):
    r = check("martingale", inputs={"base_stake": base, "bankroll": bankroll, "price": 2,
                                    "probability": f"{p.numerator}/{p.denominator}"})
    n = figure(r, "losses_to_ruin")
    assert base * (2**n - 1) <= bankroll < base * (2 ** (n + 1) - 1)
    assert figure(r, "ruin_probability_per_series") == pytest.approx(float((1 - p) ** n), abs=1e-12)
    assert figure(r, "edge") == pytest.approx(float(2 * p - 1), abs=1e-12)  # the bet's own edge, whatever the sizes
    assert r.route_taken == "decline" and r.stake is None


def test_each_route_and_problem():
    assert check("match-fixing").route_taken == "refuse"
    with pytest.raises(ProblemError) as e:
        check("match-fixing", size_stake=True)
    assert (e.value.code, e.value.param) == ("not_stake_eligible", "size_stake")
    with pytest.raises(ProblemError) as e:
        check("kelly-criterion", inputs={"price": "2"})
    assert (e.value.code, e.value.param) == ("missing_execution_input", "probability")
    warned = check("favourite-longshot-bias", inputs={"probability": "0.05", "price": "15"})
    assert warned.route_taken == "warn_first" and warned.on_fail
    shop = check("line-shopping", inputs={"prices": [1.91, 1.95, 2.0]})
    assert shop.route_taken == "execute" and figure(shop, "best_price") == 2.0 and figure(shop, "best_index") == 2
    assert check("line-shopping", inputs={"prices": [1.91]}).route_taken == "decline"
    clv = check("closing-line-value", inputs={"price": "2.1", "closing_prices": ["1.95", "1.95"], "selection": 0})
    assert figure(clv, "clv") == pytest.approx(0.05) and clv.route_taken == "execute"
    assert [f.formula for f in clv.figures if f.id == "closing_probability"] == ["devig.multiplicative@1"]


def test_inputs_are_read_as_the_calculations_read_them():
    spec = PROGRAMS["kelly"].input("price")
    assert read_input(spec, -110, "american") == Fraction(21, 11)
    assert read_input(spec, "10/11", "fractional") == Fraction(21, 11)
    assert run("kelly", {"price": Fraction(2), "probability": Fraction(55, 100)})["full_fraction"] == Fraction(1, 10)
