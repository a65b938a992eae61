"""Formula cards: every calculation cites a card that exists, with a source."""

from __future__ import annotations

import re

import pytest

from calc import run as calc_run
from api.calc_examples import REQUESTS
from domain import formula_cards as cards
from domain.devig import METHODS


def test_cards_are_unique_complete_and_sourced():
    ids = [card.id for card in cards.CARDS]
    assert len(ids) == len(set(ids))
    for card in cards.CARDS:
        assert re.fullmatch(r"[a-z]+\.[a-z_]+", card.id)
        assert isinstance(card.version, int) and card.version >= 1
        assert card.ref == f"{card.id}@{card.version}"
        assert card.formula and card.expression and card.inputs and card.outputs
        assert card.sources and all(re.search(r"\b(19|20)\d\d\b|football-data\.co\.uk", s) for s in card.sources)
        assert card.calculation in calc_run.CALCULATIONS


def test_every_devig_method_has_a_card():
    for method in METHODS:
        assert cards.get(f"devig.{method}") is not None


def test_get_by_id_and_by_citation():
    shin = cards.get("devig.shin")
    assert shin is not None and cards.get("devig.shin@1") is shin
    assert cards.get("devig.shin@2") is None
    assert cards.get("devig.shin@") is None
    assert cards.get("nope") is None
    assert any("Shin, H. S. (1993)" in s for s in shin.sources)


@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_every_calculation_cites_existing_cards(name):
    request = calc_run.decode(name, __import__("msgspec").json.encode(REQUESTS[name]))
    response = calc_run.calculate(name, request)
    assert response.formula == response.formulas[0]
    for ref in response.formulas:
        card = cards.get(ref)
        assert card is not None and card.ref == ref
    assert cards.get(response.formula).calculation == name
