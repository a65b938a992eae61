"""GET /v1/formulas and GET /v1/formulas/{card_id}: the formula cards results cite as `card@version`."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from litestar import get
from litestar.params import PathParameter

from api.conventions import RG_LINE, page
from api.openapi import problem_responses
from api.problems import ProblemError, bounded
from domain import formula_cards as cards


class Term(msgspec.Struct):
    name: str
    meaning: str


class Formula(msgspec.Struct, kw_only=True):
    object: Literal["formula"] = "formula"
    id: str
    version: int
    ref: Annotated[str, msgspec.Meta(description="How results cite this card: `id@version`.")]
    name: str
    calculation: Annotated[str, msgspec.Meta(description="The operation that runs it.")]
    formula: Annotated[str, msgspec.Meta(description="The formula in words.")]
    expression: str
    inputs: list[Term]
    outputs: list[Term]
    sources: list[str]
    rg_line: str


class FormulaList(msgspec.Struct, kw_only=True):
    object: Literal["list"] = "list"
    data: list[Formula]
    has_more: bool
    next_cursor: str | None


def formula_of(card: cards.Card) -> Formula:
    return Formula(
        id=card.id, version=card.version, ref=card.ref, name=card.name,
        calculation=f"POST /v1/calculations/{card.calculation}", formula=card.formula, expression=card.expression,
        inputs=[Term(n, t) for n, t in card.inputs], outputs=[Term(n, t) for n, t in card.outputs],
        sources=list(card.sources), rg_line=RG_LINE,
    )


@get(
    "/v1/formulas",
    summary="Formula cards",
    description="Every formula card, in registry order, in one page. Calculation results cite them as `id@version`.",
    responses=problem_responses(),
    opt={"operation": "formulas.list", "scope": None, "price": 1},
    tags=["formulas"],
)
async def list_formulas() -> FormulaList:
    return FormulaList(**page([formula_of(card) for card in cards.CARDS], False, None))


@get(
    "/v1/formulas/{card_id:str}",
    summary="One formula card",
    description="A card by its ID (`devig.shin`) or its citation (`devig.shin@1`; another version is not found).",
    responses=problem_responses("not_found"),
    opt={"operation": "formulas.get", "scope": None, "price": 1},
    tags=["formulas"],
)
async def get_formula(
    card_id: Annotated[str, PathParameter(description="Card ID, optionally with `@version`", max_length=100)],
) -> Formula:
    card = cards.get(card_id)
    if card is None:
        raise ProblemError("not_found", f"There is no formula card {bounded(card_id)!r}.", param="card_id")
    return formula_of(card)


ROUTES = [list_formulas, get_formula]
