"""Runs a calculation request through the odds maths and wraps the result. No web framework and
no API code here: `POST /v1/calculations/{name}` (through api.calc_problems), the answers and
`svc calc` run the very same code.

Numbers are exact rationals from input to result; each number of a result is rounded once, half
to even at 12 decimal places (`PLACES`), then sent as the nearest double. An input the maths
cannot use raises `Refused` with code `invalid_inputs` and a `param` naming it (e.g. `odds[1]`);
a solver that does not converge, `calc_not_available`. The codes are the API's problem codes,
which the API answers with (the CLI prints the detail).
"""

from __future__ import annotations

from datetime import UTC, datetime
from fractions import Fraction
from typing import Any, Callable, Literal

import msgspec

from calc import models as m
from domain import bets, middles, prices
from domain import devig as margin  # `devig` here is the calculation
from domain import formula_cards as cards
from domain.exact import InvalidInput, exact, round_half_even, to_float
from schemas.cost_line import RG_LINE

PLACES = 12
SOURCE = "svc odds maths"


class Refused(Exception):
    """Inputs the maths refuses: the problem the API answers with (`code`), its `detail`, and the
    request field it is about (`param`)."""

    def __init__(self, code: Literal["invalid_inputs", "calc_not_available"], detail: str,
                 param: str | None = None) -> None:
        super().__init__(detail)
        self.code, self.detail, self.param = code, detail, param


def _n(x: Fraction) -> float:
    return to_float(x, PLACES)


def _maybe(x: Fraction | None) -> float | None:
    return None if x is None else _n(x)


def _american(d: Fraction | None) -> float | None:
    """American odds of the decimal odds as shown (rounded), so the two agree: 2.0 is +100."""
    shown = None if d is None else Fraction(round_half_even(d, PLACES))
    return None if shown is None or shown <= 1 else _n(prices.american(shown))


def _price(value: Any, price_format: str, field: str) -> Fraction:
    return prices.to_decimal(value, price_format, field)  # type: ignore[arg-type]


def _with_format(price_format: str, *card_ids: str) -> list[str]:
    return [*card_ids, "odds.convert"] if price_format != "decimal" else list(card_ids)


def convert(req: m.ConvertRequest) -> tuple[m.ConvertResult, list[str]]:
    price = prices.convert(req.price, req.format, "price")
    return m.ConvertResult(
        decimal=_n(price.decimal), american=_n(price.american), fractional=prices.fraction_text(price.fractional),
        implied=_n(price.implied), display=m.PriceDisplay(**prices.display(price)),
    ), ["odds.convert"]


def _devig(method: str, odds: list[Any], price_format: str, field: str) -> margin.Devig:
    decimal_odds = [_price(o, price_format, f"{field}[{i}]") for i, o in enumerate(odds)]
    result = margin.devig(method, decimal_odds)
    if not result.converged:
        raise Refused("calc_not_available", " ".join(result.messages), param="method")
    return result


def devig(req: m.DevigRequest) -> tuple[m.DevigResult, list[str]]:
    result = _devig(req.method, req.odds, req.format, "odds")
    fair = result.fair_odds
    return m.DevigResult(
        method=req.method,
        probabilities=[_n(p) for p in result.probabilities],
        fair_odds=[_maybe(d) for d in fair],
        fair_odds_american=[_american(d) for d in fair],
        overround=_n(result.overround),
        hold=_n(result.hold),
        parameter=_maybe(result.parameter),
        parameter_name=result.parameter_name,
        in_range=result.in_range,
        messages=list(result.messages),
    ), _with_format(req.format, f"devig.{req.method}", "odds.overround")


def payout(req: m.PayoutRequest) -> tuple[m.PayoutResult, list[str]]:
    d = _price(req.odds, req.format, "odds")
    result = bets.payout(exact(req.stake, "stake"), d)
    return m.PayoutResult(
        decimal_odds=_n(d), payout=_n(result.payout), profit=_n(result.profit),
        break_even_probability=_n(result.break_even_probability),
    ), _with_format(req.format, "bet.payout")


def parlay(req: m.ParlayRequest) -> tuple[m.ParlayResult, list[str]]:
    legs = [(_price(leg.odds, req.format, f"legs[{i}].odds"), leg.status) for i, leg in enumerate(req.legs)]
    result = bets.parlay(legs, exact(req.stake, "stake"))
    return m.ParlayResult(
        decimal_odds=_n(result.decimal_odds), american_odds=_american(result.decimal_odds),
        implied_probability=_n(prices.implied(result.decimal_odds)), legs_counted=list(result.legs_counted),
        legs_removed=list(result.legs_removed), lost=result.lost, payout=_n(result.payout), profit=_n(result.profit),
    ), _with_format(req.format, "bet.parlay")


def ev(req: m.EvRequest) -> tuple[m.EvResult, list[str]]:
    d = _price(req.odds, req.format, "odds")
    result = bets.expected_value(d, exact(req.probability, "probability"), exact(req.stake, "stake"))
    return m.EvResult(
        decimal_odds=_n(d), expected_value=_n(result.expected_value), edge=_n(result.edge),
        probability_edge=_n(result.probability_edge), break_even_probability=_n(result.break_even_probability),
        fair_odds=_maybe(result.fair_odds),
    ), _with_format(req.format, "bet.ev")


def kelly(req: m.KellyRequest) -> tuple[m.KellyResult, list[str]]:
    d = _price(req.odds, req.format, "odds")
    bankroll = None if req.bankroll is None else exact(req.bankroll, "bankroll")
    result = bets.kelly(
        d, exact(req.probability, "probability"), exact(req.fraction, "fraction"), exact(req.cap, "cap"), bankroll
    )
    messages = []
    if result.full_fraction <= 0:
        messages.append("No edge at this price: the Kelly stake is zero.")
    if result.capped:
        messages.append("The stake is capped at the largest share of bankroll allowed (`cap`).")
    return m.KellyResult(
        decimal_odds=_n(d), edge=_n(result.edge), full_fraction=_n(result.full_fraction),
        stake_fraction=_n(result.stake_fraction), capped=result.capped, stake=_maybe(result.stake), messages=messages,
    ), _with_format(req.format, "bet.kelly")


def arbitrage(req: m.ArbitrageRequest) -> tuple[m.ArbitrageResult, list[str]]:
    odds = [_price(o, req.format, f"odds[{i}]") for i, o in enumerate(req.odds)]
    result = bets.arbitrage(odds, exact(req.stake, "stake"))
    return m.ArbitrageResult(
        is_arbitrage=result.is_arbitrage, booksum=_n(result.booksum), stakes=[_n(s) for s in result.stakes],
        payout=_n(result.payout), profit=_n(result.profit), roi=_n(result.roi),
    ), _with_format(req.format, "bet.arbitrage")


def middle(req: m.MiddleRequest) -> tuple[m.MiddleResult, list[str]]:
    positions = [
        middles.Position(
            p.side, exact(p.line, f"positions[{i}].line"), _price(p.odds, req.format, f"positions[{i}].odds"),
            exact(p.stake, f"positions[{i}].stake"),
        )
        for i, p in enumerate(req.positions)
    ]
    result = middles.middle(req.kind, positions[0], positions[1])
    return m.MiddleResult(
        is_middle=result.is_middle,
        measure="home_margin" if req.kind == "spread" else "total_points",
        middle_outcomes=list(result.middle_outcomes),
        profit_if_middle=_maybe(result.profit_if_middle),
        worst_profit=_n(result.worst_profit),
        break_even_middle_probability=_maybe(result.break_even_middle_probability),
        scenarios=[m.MiddleScenario(low=s.low, high=s.high, grades=list(s.grades), profit=_n(s.profit))
                   for s in result.scenarios],
    ), _with_format(req.format, "bet.middle")


def clv(req: m.ClvRequest) -> tuple[m.ClvResult, list[str]]:
    taken = _price(req.taken_odds, req.format, "taken_odds")
    used = ["bet.clv"]
    if req.closing_odds is not None and req.closing_probability is not None:
        raise InvalidInput("closing_odds", "send closing_probability, or closing_odds with selection, not both")
    if req.closing_odds is None:
        if req.closing_probability is None:
            raise InvalidInput("closing_probability", "send closing_probability, or closing_odds with selection")
        if req.selection is not None:
            raise InvalidInput("selection", "selection picks an outcome of closing_odds; send closing_odds too")
        closing = exact(req.closing_probability, "closing_probability")
    else:
        if req.selection is None or req.selection >= len(req.closing_odds):
            raise InvalidInput("selection", f"with closing_odds, selection is your side's index, 0 to {len(req.closing_odds) - 1}")
        fair = _devig(req.method, req.closing_odds, req.format, "closing_odds")
        closing = fair.probabilities[req.selection]
        if not 0 < closing < 1:
            raise InvalidInput("method", f"the {req.method} method puts this outcome outside (0, 1); choose another method")
        used.append(f"devig.{req.method}")
    result = bets.closing_line_value(taken, closing)
    return m.ClvResult(
        taken_decimal_odds=_n(taken), taken_implied_probability=_n(prices.implied(taken)), closing_probability=_n(closing),
        closing_fair_odds=_n(result.closing_fair_odds), clv=_n(result.clv),
        probability_edge=_n(result.probability_edge), beat_close=result.beat_close,
    ), _with_format(req.format, *used)


# name -> (request type, runner, response type)
CALCULATIONS: dict[str, tuple[type[m.Request], Callable[[Any], tuple[Any, list[str]]], type[m.Calculation]]] = {
    "convert": (m.ConvertRequest, convert, m.ConvertCalculation),
    "devig": (m.DevigRequest, devig, m.DevigCalculation),
    "payout": (m.PayoutRequest, payout, m.PayoutCalculation),
    "parlay": (m.ParlayRequest, parlay, m.ParlayCalculation),
    "ev": (m.EvRequest, ev, m.EvCalculation),
    "kelly": (m.KellyRequest, kelly, m.KellyCalculation),
    "arbitrage": (m.ArbitrageRequest, arbitrage, m.ArbitrageCalculation),
    "middle": (m.MiddleRequest, middle, m.MiddleCalculation),
    "clv": (m.ClvRequest, clv, m.ClvCalculation),
}


def calculate(name: str, request: m.Request, as_of: datetime | None = None) -> m.Calculation:
    """The full response for one calculation; raises `Refused` on inputs the maths refuses."""
    _, runner, response_type = CALCULATIONS[name]
    try:
        result, used = runner(request)
    except InvalidInput as exc:
        detail = f"Invalid value for '{exc.field}': {exc.message}" if exc.field else exc.message
        raise Refused("invalid_inputs", detail, param=exc.field) from None
    refs = [cards.ref(card_id) for card_id in used]
    return response_type(
        formula=refs[0], formulas=refs, source=SOURCE, as_of=as_of or datetime.now(UTC), rg_line=RG_LINE,
        inputs=request, result=result,
    )


def decode(name: str, body: bytes | str) -> m.Request:
    """A request body decoded as the API would (for the CLI and tests); msgspec errors pass through."""
    return msgspec.json.decode(body, type=CALCULATIONS[name][0])
