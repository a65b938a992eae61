"""The strategy registry (spec 4.13-4.15): GET /v1/strategies, GET /v1/strategies/{strategy_id},
POST /v1/strategies/{strategy_id}:check, GET /v1/recipes and GET /v1/recipes/{recipe_id}.

One credit each, no key needed. Lists are one page, in ledger order (strategies) or chain order
(recipes), never ranked. A check runs the strategy's preconditions on the caller's numbers with
the engine's own maths (api/strategy_check.py).

Routing note: Litestar matches whole path segments, so the check is served by a POST on
`/v1/strategies/{strategy_id}` whose last segment must end in `:check`.
"""

# no `from __future__ import annotations`: Litestar reads the handlers' types at import time

from dataclasses import dataclass
from typing import Annotated, Literal

from litestar import Request, get, post
from litestar.exceptions import ValidationException
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example
from litestar.params import Body, PathParameter, QueryParameter

from api.conventions import request_id
from api.errors import body_validation_handler
from api.openapi import problem_responses
from api.problems import ProblemError
from api.queries import strategies as registry_sql
from api.resources.strategies import (
    Alternative, Recipe, RecipeList, Strategy, StrategyList, chains_of, check_call, midnight, recipe, recipe_entry,
    registry_version, runs, strategy, strategy_entry, today,
)
from api.routes._db import read_models
from api.routes._docs import READ_ERRORS
from api.strategy_check import CheckRequest, StrategyCheck, run_check
from schemas.strategies import FAMILY_PATTERN, RecipeEntry, StrategyEntry

Verdict = Literal["robust", "conditional", "weak", "myth", "prohibited"]
Route = Literal["execute", "check_then_execute", "warn_first", "decline", "refuse"]
CHECK_SUFFIX = ":check"


@dataclass
class Registry:
    strategies: list[tuple[dict, StrategyEntry]]  # (row, entry) in ledger order
    recipes: list[tuple[dict, RecipeEntry]]  # in chain order

    @property
    def by_slug(self) -> dict[str, StrategyEntry]:
        return {e.slug: e for _, e in self.strategies}

    def find(self, ref: str) -> tuple[dict, StrategyEntry] | None:
        return next(((r, e) for r, e in self.strategies if ref in (e.slug, r["id"])), None)

    def version(self) -> tuple[str, object]:
        rows = [r for r, _ in self.strategies] + [r for r, _ in self.recipes]
        newest = max((r["as_of"] for r in rows), default=None)
        as_of = midnight(newest.date() if newest is not None else today())
        return registry_version([(r["id"], r["version"]) for r in rows], as_of), as_of

    def alternatives(self) -> dict[str, tuple[str, StrategyEntry]]:
        return {e.slug: (r["id"], e) for r, e in self.strategies}

    def chains(self):
        published = self.by_slug
        return chains_of((e, runs(e, published)) for _, e in self.recipes)


async def load(request: Request) -> Registry:
    async with read_models(request) as (conn, schema):
        strategy_rows = await registry_sql.strategies(conn, schema)
        recipe_rows = await registry_sql.recipes(conn, schema)
    return Registry(
        [(dict(r), strategy_entry(r)) for r in strategy_rows], [(dict(r), recipe_entry(r)) for r in recipe_rows],
    )


def _strategy(reg: Registry, row: dict, e: StrategyEntry, rid: str, chains=None, alternatives=None) -> Strategy:
    chains = reg.chains() if chains is None else chains
    alternatives = reg.alternatives() if alternatives is None else alternatives
    return strategy(row, e, chains.get(e.slug, []), alternatives, rid, today())


def _not_found(ref: str) -> ProblemError:
    return ProblemError("not_found", f"There is no strategy {ref[:100]!r} in the registry (GET /v1/strategies lists them).",
                        param="strategy_id")


def _ok(container: type, description: str) -> dict:
    return {200: ResponseSpec(data_container=container, description=description), **problem_responses(*READ_ERRORS)}


@get(
    "/v1/strategies",
    summary="List strategies",
    description=(
        "Every published strategy matching the filters, in one page, in ledger order (family, then ledger row). "
        "Never ranked and never an edge: each carries its verdict, the evidence behind it and its check. "
        "`registry_version` moves whenever a strategy's verdict or evidence (its `version`) changes."
    ),
    responses=_ok(StrategyList, "All matching strategies."),
    opt={"operation": "strategies.list", "scope": None, "price": 1},
    tags=["formulas-and-strategies"],
)
async def list_strategies(
    request: Request,
    family: Annotated[str | None, QueryParameter(pattern=FAMILY_PATTERN, max_length=3,
                                                 description="Family: B1 to B14 (betting) or F1 to F9 (fantasy).")] = None,
    verdict: Annotated[Verdict | None, QueryParameter(description="Verdict.")] = None,
    route: Annotated[Route | None, QueryParameter(description="What a check does.")] = None,
) -> StrategyList:
    reg = await load(request)
    version, as_of = reg.version()
    chains, alternatives, rid = reg.chains(), reg.alternatives(), request_id(request)
    data = [
        _strategy(reg, row, e, rid, chains, alternatives) for row, e in reg.strategies
        if (family is None or e.family == family) and (verdict is None or e.verdict == verdict)
        and (route is None or e.route == route)
    ]
    return StrategyList(data=data, has_more=False, next_cursor=None, registry_version=version, as_of=as_of)


StrategyRef = Annotated[str, PathParameter(
    max_length=100,
    description="The strategy's registry ID (slug, e.g. `kelly-criterion`) or `stg_` ID; for the check, followed by `:check`.",
)]


@get(
    "/v1/strategies/{strategy_id:str}",
    summary="One strategy",
    description="A strategy by its registry ID (slug) or `stg_` ID.",
    responses={**_ok(Strategy, "The strategy."), **problem_responses("not_found")},
    opt={"operation": "strategies.get", "scope": None, "price": 1},
    tags=["formulas-and-strategies"],
)
async def get_strategy(request: Request, strategy_id: StrategyRef) -> Strategy:
    if strategy_id.endswith(CHECK_SUFFIX):
        raise ProblemError("method_not_allowed", "A check is a POST.", headers={"Allow": "POST"})
    reg = await load(request)
    found = reg.find(strategy_id)
    if found is None:
        raise _not_found(strategy_id)
    return _strategy(reg, *found, request_id(request))


_CHECK_EXAMPLE = {"inputs": {"probability": "0.55", "price": "2.0", "bankroll": "1000"}, "format": "decimal"}


@post(
    "/v1/strategies/{strategy_id:str}",
    status_code=200,
    summary="Check a strategy on your numbers: POST /v1/strategies/{strategy_id}:check",
    description=(
        "The path is the strategy's ID followed by `:check` (`/v1/strategies/kelly-criterion:check`). The body "
        "names each input by its `inputs[].id`; numbers as in the calculations API (JSON numbers or exact "
        "strings), prices in `format`. The answer: the route taken, each precondition with its value, threshold "
        "and result, the figures with the formula card each comes from (`card@version`), the filled `on_fail` "
        "sentences, the alternative for a declined strategy, and `rg_line`. An execution input is never assumed: "
        "leaving one out is `missing_execution_input` naming it. A myth or prohibited strategy asked to size a "
        "stake is `not_stake_eligible`; one whose rule depends on where you are needs `jurisdiction`. Send an "
        "`Idempotency-Key` header to make a retry return the first answer."
    ),
    operation_id="strategies_check",
    responses={
        200: ResponseSpec(data_container=StrategyCheck, description="The check's result."),
        **problem_responses(*READ_ERRORS, "not_found", "missing_execution_input", "invalid_inputs",
                            "not_stake_eligible", "needs_jurisdiction", "idempotency_key_reused",
                            "idempotency_in_progress"),
    },
    opt={"operation": "strategies.check", "scope": None, "price": 1},
    tags=["formulas-and-strategies"],
    exception_handlers={ValidationException: body_validation_handler(
        'Expected a number, a string holding one (e.g. "1.91", "-110", "10/11" or "evens"), or a list of them')},
)
async def check_strategy(
    request: Request, strategy_id: StrategyRef,
    data: Annotated[CheckRequest, Body(examples=[Example(summary="Kelly at 55% and evens", value=_CHECK_EXAMPLE)])],
) -> StrategyCheck:
    if not strategy_id.endswith(CHECK_SUFFIX):
        raise ProblemError("method_not_allowed", "Only GET reads a strategy; a check is "
                           f"POST /v1/strategies/{strategy_id}:check.", headers={"Allow": "GET"})
    ref = strategy_id[: -len(CHECK_SUFFIX)]
    reg = await load(request)
    found = reg.find(ref)
    if found is None:
        raise _not_found(ref)
    row, e = found
    if data.chain is not None:
        chain = next((r for _, r in reg.recipes if r.id == data.chain), None)
        if chain is None or e.slug not in chain.strategies:
            raise ProblemError("invalid_request", f"{data.chain} is not a recipe that runs {e.slug}.", param="chain")
    alternative = None
    if e.alternative is not None:
        alt = reg.find(e.alternative.strategy)
        if alt is not None:
            alt_row, alt_e = alt
            alternative = Alternative(id=alt_e.slug, public_id=alt_row["id"], name=alt_e.name, verdict=alt_e.verdict,
                                      why=e.alternative.why, check=check_call(alt_e.slug))
    return run_check(e, row["id"], row["version"], data, alternative, request_id(request))


@get(
    "/v1/recipes",
    summary="List recipes (decision chains)",
    description="Every published recipe, C1 onward, in one page: the strategies each runs in order, the inputs "
                "it needs from you and those it assumes, and the check call that runs it.",
    responses=_ok(RecipeList, "All recipes."),
    opt={"operation": "recipes.list", "scope": None, "price": 1},
    tags=["formulas-and-strategies"],
)
async def list_recipes(request: Request) -> RecipeList:
    reg = await load(request)
    version, as_of = reg.version()
    published, rid = reg.by_slug, request_id(request)
    return RecipeList(data=[recipe(row, r, published, rid) for row, r in reg.recipes], has_more=False,
                      next_cursor=None, registry_version=version, as_of=as_of)


@get(
    "/v1/recipes/{recipe_id:str}",
    summary="One recipe",
    description="A recipe by its chain ID (C1 ... C46).",
    responses={**_ok(Recipe, "The recipe."), **problem_responses("not_found")},
    opt={"operation": "recipes.get", "scope": None, "price": 1},
    tags=["formulas-and-strategies"],
)
async def get_recipe(
    request: Request,
    recipe_id: Annotated[str, PathParameter(max_length=10, description="Chain ID: C1 to C46.")],
) -> Recipe:
    reg = await load(request)
    found = next(((row, r) for row, r in reg.recipes if r.id == recipe_id), None)
    if found is None:
        raise ProblemError("not_found", f"There is no recipe {recipe_id!r} (GET /v1/recipes lists them).",
                           param="recipe_id")
    return recipe(*found, reg.by_slug, request_id(request))


ROUTES = [list_strategies, get_strategy, check_strategy, list_recipes, get_recipe]
