"""The strategy registry's files: the loader's rules, the rules across files, versions, and the
shipped registry itself (every file valid, rows in ledger order, programs that run)."""

from __future__ import annotations

from datetime import datetime, timezone

import re

import msgspec
import pytest

from ingest.content import known_entries, plan
from ingest.strategies import RECIPES, STRATEGIES, check_registry, parse_recipe, parse_strategy, read_registry, registry_root
from domain.strategy_checks import RUNNERS, read_input
from projections.reducers.content import reduce_strategy
from domain import formula_cards as cards
from schemas.content import EntryError
from schemas.strategies import FAMILIES, MAX_CHAIN, chain_number, family_order, load_strategy, strategy_id, version_hash
from domain.strategy_programs import PROGRAMS

NOW = datetime(2026, 11, 26, 12, tzinfo=timezone.utc)
KELLY = (registry_root() / "strategies/B5/kelly-criterion.toml").read_text()
MARTINGALE = (registry_root() / "strategies/B6/martingale.toml").read_text()


def test_the_shipped_registry_is_valid_and_in_ledger_order():
    strategies, recipes = read_registry(registry_root())
    assert [f.path for f in strategies + recipes if f.error] == []
    entries = sorted((f.entry for f in strategies), key=lambda e: (family_order(e.family), e.ledger_row))
    assert [e.ledger_row for e in entries] == list(range(1, len(entries) + 1))  # numbered 1.. in ledger order
    assert all(e.family in FAMILIES for e in entries)
    for e in entries:
        spec = PROGRAMS[e.program]
        for i in e.inputs:  # every assumed value is one the maths takes
            if i.default is not None:
                read_input(spec.input(i.id), i.default, "decimal")
        if e.verdict in ("myth", "prohibited"):
            assert e.route in ("decline", "refuse")
    assert sorted(chain_number(r.entry.id) for r in recipes) == list(range(1, MAX_CHAIN + 1))  # C1 to C46, none missing


def test_every_program_runs_and_cites_cards_that_exist():
    assert set(RUNNERS) == set(PROGRAMS)
    for spec in PROGRAMS.values():
        for f in spec.figures:
            assert f.card is None or cards.get(f.card) is not None, (spec.name, f.id)


def edit(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def with_row(text: str, row: int) -> str:
    """The file with another ledger row (shipped rows move as strategies are added)."""
    return re.sub(r"^ledger_row = \d+$", f"ledger_row = {row}", text, count=1, flags=re.M)


@pytest.mark.parametrize("old,new,reason", [
    ('verdict = "robust"', 'verdict = "prohibited"', r"refused \(route refuse\)"),
    ('route = "check_then_execute"', 'route = "decline"', "not declined outright"),
    ('[[inputs]]\nid = "probability"\nexecution_input = true\n', '[[inputs]]\nid = "probability"\nexecution_input = true\ndefault = "0.5"\n', "never assumed"),
    ('op = ">"\nthreshold = 0\n', 'op = "is_true"\nthreshold = 0\n', "threshold"),
    ('card = "bet.ev"\non_fail', 'card = "bet.parlay"\non_fail', "formulas does not list"),
    ('name = "Kelly criterion"', 'name = "Kelly criterion"\nsecret = 1', "unknown field"),
])
def test_the_loader_refuses_with_a_reason(old, new, reason):
    with pytest.raises(EntryError, match=reason):
        load_strategy("B5", "kelly-criterion", edit(KELLY, old, new))


def test_ledger_rows_stay_within_the_ledger():
    with pytest.raises(EntryError, match="ledger_row"):
        load_strategy("B5", "kelly-criterion", with_row(KELLY, 135))


def test_a_myth_names_its_alternative_and_folders_are_families():
    with pytest.raises(EntryError, match="alternative"):
        load_strategy("B6", "martingale", MARTINGALE.split("[alternative]")[0] + "[evidence]" + MARTINGALE.split("[evidence]")[1])
    with pytest.raises(EntryError, match="not a family"):
        load_strategy("B15", "martingale", MARTINGALE)


def test_rules_across_files_refuse_only_the_file_that_breaks_them():
    kelly = parse_strategy("B5/kelly-criterion.toml", with_row(KELLY, 4))
    half = parse_strategy("B5/fractional-kelly.toml",
                          with_row((registry_root() / "strategies/B5/fractional-kelly.toml").read_text(), 5))
    martingale = parse_strategy("B6/martingale.toml", with_row(MARTINGALE, 6))
    early = parse_strategy("B6/early.toml", with_row(MARTINGALE, 3))  # B6 before B5's rows
    extra = parse_strategy("B5/extra.toml", with_row(edit(KELLY, '[[inputs]]\nid = "cap"', '[[inputs]]\nid = "luck"'), 9))
    unknown_card = parse_strategy("B5/card.toml", edit(with_row(KELLY, 7),
                                                        'formulas = ["bet.kelly",', 'formulas = ["bet.nothing", "bet.kelly",'))
    orphan = parse_strategy("B6/orphan.toml", edit(with_row(MARTINGALE, 8),
                                                   'strategy = "fractional-kelly"', 'strategy = "martingale"'))
    chain = parse_recipe("C4.toml", (registry_root() / "recipes/C4.toml").read_text())
    lost = parse_recipe("C2.toml", (registry_root() / "recipes/C2.toml").read_text())  # names an arbitrage absent here
    strategies, recipes = check_registry([kelly, half, martingale, early, extra, unknown_card, orphan], [chain, lost])
    errors = {f.path: f.error for f in strategies + recipes}
    assert errors["strategies/B5/kelly-criterion.toml"] is None and errors["strategies/B6/martingale.toml"] is None
    assert "ledger order" in errors["strategies/B6/early.toml"]
    assert "does not take luck" in errors["strategies/B5/extra.toml"]
    assert "bet.nothing" in errors["strategies/B5/card.toml"]
    assert "not a robust strategy" in errors["strategies/B6/orphan.toml"]
    assert errors["recipes/C4.toml"] is None and "two-way-arbitrage" in errors["recipes/C2.toml"]


def test_a_recipe_naming_a_strategy_whose_file_is_refused_still_stands():
    """A refused file leaves its strategy's last good version in the registry; a recipe naming a
    strategy with no file at all is refused."""
    broken = parse_strategy("B5/kelly-criterion.toml", edit(KELLY, 'verdict = "robust"', 'verdict = "maybe"'))
    half = parse_strategy("B5/fractional-kelly.toml", (registry_root() / "strategies/B5/fractional-kelly.toml").read_text())
    chain = parse_recipe("C44.toml", (registry_root() / "recipes/C44.toml").read_text())
    strategies, recipes = check_registry([broken, half], [chain])
    assert strategies[0].error is not None and recipes[0].error is None
    _, recipes = check_registry([half], [chain])
    assert "kelly-criterion" in recipes[0].error


def test_plan_publishes_revises_and_retires_and_version_follows_verdict_and_evidence():
    kelly = parse_strategy("B5/kelly-criterion.toml", KELLY)
    events, letters = plan([kelly], {}, NOW, STRATEGIES)
    assert [type(e).__name__ for e in events] == ["StrategyPublished"] and letters == []
    assert events[0].entry_id == strategy_id("kelly-criterion")
    state, _ = reduce_strategy(None, events[0])
    assert (state.version, state.status) == (1, "published")

    renamed = parse_strategy("B5/kelly-criterion.toml", edit(KELLY, 'name = "Kelly criterion"', 'name = "Kelly"'))
    log = list(events)
    events, _ = plan([renamed], known_entries(log, STRATEGIES), NOW, STRATEGIES)
    assert [type(e).__name__ for e in events] == ["StrategyRevised"]
    state, _ = reduce_strategy(state, events[0])
    assert state.version == 1  # a new name is not a new verdict or evidence
    log += events
    graded = parse_strategy("B5/kelly-criterion.toml", edit(renamed.raw, 'grade = "A"', 'grade = "B"'))
    events, _ = plan([graded], known_entries(log, STRATEGIES), NOW, STRATEGIES)
    state, _ = reduce_strategy(state, events[0])
    assert state.version == 2 and [h.action for h in state.history] == ["published", "revised", "revised"]
    assert reduce_strategy(state, events[0])[0] is state  # the same event again changes nothing
    log += events
    events, letters = plan([], known_entries(log, STRATEGIES), NOW, STRATEGIES)
    assert [(type(e).__name__, e.reason) for e in events] == [("StrategyRetired", "file removed")]
    assert plan([], known_entries(log, RECIPES), NOW, RECIPES) == ([], [])  # recipes are another kind


def test_version_hash_ignores_review_dates():
    e = load_strategy("B5", "kelly-criterion", KELLY)
    reviewed = msgspec.structs.replace(e, evidence=msgspec.structs.replace(e.evidence, review_due=e.evidence.review_due.replace(year=2030)))
    assert version_hash(reviewed) == version_hash(e)
    assert version_hash(msgspec.structs.replace(e, verdict="conditional")) != version_hash(e)
