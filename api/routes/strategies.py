"""The strategy registry: GET /v1/strategies, GET /v1/strategies/{strategy_id},
POST /v1/strategies/{strategy_id}:check, GET /v1/recipes and GET /v1/recipes/{recipe_id}.

One credit each, no key needed. Lists are one page, in ledger order (strategies) or chain order
(recipes), never ranked. A check runs the strategy's preconditions on the caller's numbers with
the engine's own maths (api/strategy_check.py).

Routing note: Litestar matches whole path segments, so the check is served by a POST on
`/v1/strategies/{strategy_id}` whose last segment must end in `:check`.
"""

# no `from __future__ import annotations`: Litestar reads the handlers' types at import time

from typing import Annotated, Literal

import msgspec
from litestar import Request, Response, get, post
from litestar.enums import MediaType
from litestar.exceptions import ValidationException
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example
from litestar.params import Body, HeaderParameter, PathParameter, QueryParameter

from api import idempotency
from access.context import access_of
from api.conventions import request_id
from api.errors import body_validation_handler
from api.openapi import problem_responses
from api.problems import ProblemError
from api.registry import check_with_rules, not_found, read_registry
from api.resources.strategies import Recipe, RecipeList, Strategy, StrategyList
from api.routes._db import read_models
from api.routes._docs import READ_ERRORS
from api.strategy_check import CheckRequest, StrategyCheck, check_example
from schemas.strategies import FAMILY_PATTERN

Verdict = Literal["robust", "conditional", "weak", "myth", "prohibited"]
Route = Literal["execute", "check_then_execute", "warn_first", "decline", "refuse"]
CHECK_SUFFIX = ":check"


def _ok(container: type, description: str) -> dict:
    # no generated example: Litestar would make a random one, and the committed document must be stable
    return {200: ResponseSpec(data_container=container, description=description, generate_examples=False),
            **problem_responses(*READ_ERRORS)}


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
    async with read_models(request) as (conn, schema):
        reg = await read_registry(conn, schema)
    version, as_of = reg.version()
    chains, alternatives, rid = reg.chains(), reg.alternatives(), request_id(request)
    data = [
        reg.strategy(row, e, rid, chains, alternatives) for row, e in reg.strategies
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
    async with read_models(request) as (conn, schema):
        reg = await read_registry(conn, schema)
    found = reg.find(strategy_id)
    if found is None:
        raise not_found(strategy_id)
    return reg.strategy(*found, request_id(request))


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
        200: ResponseSpec(data_container=StrategyCheck, description="The check's result.", generate_examples=False,
                          examples=[Example(summary="Kelly at 55% and evens", value=check_example())]),
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
    idempotency_key: Annotated[str | None, HeaderParameter(
        name=idempotency.HEADER, max_length=255, required=False,
        description="Any unique string (1 to 255 visible ASCII): a retry with the same key and body gets the first answer.",
    )] = None,
) -> Response:
    if not strategy_id.endswith(CHECK_SUFFIX):
        raise ProblemError("method_not_allowed", "Only GET reads a strategy; a check is "
                           f"POST /v1/strategies/{strategy_id}:check.", headers={"Allow": "GET"})
    key = idempotency.check_key(idempotency_key)
    if key is None:
        return _json(await _check(request, strategy_id[: -len(CHECK_SUFFIX)], data))
    access = access_of(request)
    subject = f"{access.caller.mode}:{access.caller.subject}" if access is not None else "unmetered"
    digest = idempotency.fingerprint(strategy_id, msgspec.json.encode(data, order="deterministic"))
    async with read_models(request) as (conn, _):
        stored = await idempotency.begin(conn, subject, key, "strategies.check", digest)
    if stored is not None:
        return Response(stored.body, status_code=stored.status, media_type=MediaType.JSON,
                        headers={"Idempotent-Replayed": "true"})
    try:
        body = msgspec.json.encode(await _check(request, strategy_id[: -len(CHECK_SUFFIX)], data))
    except BaseException:
        async with read_models(request) as (conn, _):
            await idempotency.forget(conn, subject, key)
        raise
    async with read_models(request) as (conn, _):
        await idempotency.finish(conn, subject, key, 200, body)
    return Response(body, status_code=200, media_type=MediaType.JSON)


def _json(result: StrategyCheck) -> Response:
    return Response(msgspec.json.encode(result), status_code=200, media_type=MediaType.JSON)


async def _check(request: Request, ref: str, data: CheckRequest) -> StrategyCheck:
    async with read_models(request) as (conn, schema):
        reg = await read_registry(conn, schema)
        return await check_with_rules(conn, schema, reg, ref, data, request_id(request))


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
    async with read_models(request) as (conn, schema):
        reg = await read_registry(conn, schema)
    version, as_of = reg.version()
    rid = request_id(request)
    return RecipeList(data=[reg.recipe(row, r, rid) for row, r in reg.recipes], has_more=False,
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
    async with read_models(request) as (conn, schema):
        reg = await read_registry(conn, schema)
    found = reg.find_recipe(recipe_id)
    if found is None:
        raise ProblemError("not_found", f"There is no recipe {recipe_id!r} (GET /v1/recipes lists them).",
                           param="recipe_id")
    return reg.recipe(*found, request_id(request))


ROUTES = [list_strategies, get_strategy, check_strategy, list_recipes, get_recipe]
