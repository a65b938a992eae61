"""POST /v1/calculations/{name}: the betting-maths calculators (the "calculations" group).

One typed route per calculation, so each has its own request and response schema and examples.
No key and no database needed; 1 credit each. An unknown name is 404 `not_found` with
`param` = `name`.
"""

# no `from __future__ import annotations`: Litestar reads the handlers' types at import time

from typing import Annotated, Any

from litestar import post
from litestar.exceptions import ValidationException
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example
from litestar.params import Body, FromPath

from api import calc_problems
from api.calc_examples import SUMMARIES, request_example, response_example
from api.errors import body_validation_handler
from api.openapi import problem_responses
from api.problems import ProblemError, bounded
from calc.run import CALCULATIONS

NAMES = tuple(CALCULATIONS)
_on_validation = body_validation_handler(
    'Expected a number, or a string holding one (e.g. "1.91", "-110", "10/11" or "evens")'
)

DESCRIPTIONS = {
    "convert": "One price in every format: decimal, American, fractional (exact, lowest terms) and implied probability.",
    "devig": "Fair probabilities of one book's prices for every outcome of a market, with the margin removed by "
             "`method`, plus fair odds, overround, hold and the method's parameter. A probability outside (0, 1) is "
             "flagged (`in_range` false) and explained in `messages`.",
    "payout": "What a stake returns at a price, the profit, and the break-even probability.",
    "parlay": "A parlay's price and payout; pushed or void legs drop out, a lost leg loses it.",
    "ev": "Expected value and edge of a bet, given your probability that it wins.",
    "kelly": "Kelly stake as a share of bankroll: full, fractional (`fraction`) and capped (`cap`).",
    "arbitrage": "Whether the best prices on every outcome guarantee a profit, and the stakes that pay the same "
                 "on every outcome.",
    "middle": "Two opposite positions on one spread or total: the scores where both win, and the profit of "
              "every range of scores.",
    "clv": "Closing-line value of a price taken, against the closing no-vig probability (given, or devigged from "
           "closing prices).",
}


def _route(name: str):
    request_type, _, response_type = CALCULATIONS[name]
    responses = problem_responses("invalid_inputs", "calc_not_available", "not_found")
    responses[200] = ResponseSpec(
        data_container=response_type,
        description="The result, with the formula card it used, the inputs echoed and `rg_line`.",
        examples=[Example(summary=SUMMARIES[name], value=response_example(name))],
    )

    async def handler(data: Any) -> Any:
        return calc_problems.calculate(name, data)

    handler.__annotations__ = {
        "data": Annotated[request_type, Body(examples=[Example(summary=SUMMARIES[name], value=request_example(name))])],
        "return": response_type,
    }
    handler.__name__ = handler.__qualname__ = f"calculate_{name}"
    return post(
        f"/v1/calculations/{name}",
        status_code=200,
        summary=f"Calculate: {name}",
        description=DESCRIPTIONS[name],
        operation_id=f"calculations_{name}",
        responses=responses,
        opt={"operation": f"calculations.{name}", "scope": None, "price": 1},
        tags=["calculations"],
        exception_handlers={ValidationException: _on_validation},
    )(handler)


@post(
    "/v1/calculations/{name:str}",
    status_code=200,
    include_in_schema=False,
    opt={"operation": "calculations.unknown", "scope": None, "price": 0},
)
async def unknown_calculation(name: FromPath[str]) -> None:
    raise ProblemError(
        "not_found", f"There is no calculation named {bounded(name)!r}. Calculations: {', '.join(NAMES)}.", param="name"
    )


ROUTES = [*(_route(name) for name in NAMES), unknown_calculation]
