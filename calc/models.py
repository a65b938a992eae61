"""Request and response bodies of the calculations API (`POST /v1/calculations/{name}`).

Pure msgspec types, shared by the routes, the answers and the `svc calc` commands. Requests refuse unknown
fields. A number may be sent as a JSON number or as a string (a decimal, a ratio like "10/11",
or "evens"); strings are read exactly, JSON numbers by their shortest decimal text.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

import msgspec

from domain import prices
from domain.bets import LegStatus
from domain.devig import Method
from domain.exact import NUMBER_PATTERN
from domain.middles import Grade, MiddleKind, Side

NumberText = Annotated[
    str,
    msgspec.Meta(
        pattern=NUMBER_PATTERN, max_length=64,
        description='A number as text, read exactly: a decimal ("1.91", "-110"), a ratio ("10/11") or "evens".',
    ),
]
Number = float | NumberText
Odds = Annotated[Number, msgspec.Meta(description="A price in the request's `format`.")]
PriceFormat = Annotated[
    prices.PriceFormat,
    msgspec.Meta(description="How the prices are written: decimal odds, American odds, fractional odds or implied probability."),
]


class Request(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    pass


# --- requests ---------------------------------------------------------------------------------

class ConvertRequest(Request):
    price: Odds
    format: PriceFormat = "decimal"


class DevigRequest(Request):
    odds: Annotated[list[Odds], msgspec.Meta(min_length=2, max_length=100, description="One price per outcome of one market, from one book.")]
    method: Method = "multiplicative"
    format: PriceFormat = "decimal"


class PayoutRequest(Request):
    odds: Odds
    stake: Number
    format: PriceFormat = "decimal"


class ParlayLeg(Request):
    odds: Odds
    status: Annotated[LegStatus, msgspec.Meta(description="`push` and `void` legs drop out; one `lost` leg loses the parlay.")] = "open"


class ParlayRequest(Request):
    legs: Annotated[list[ParlayLeg], msgspec.Meta(min_length=2, max_length=30)]
    stake: Number
    format: PriceFormat = "decimal"


class EvRequest(Request):
    odds: Odds
    probability: Annotated[Number, msgspec.Meta(description="Your probability that the bet wins, 0 to 1.")]
    stake: Number = 1.0
    format: PriceFormat = "decimal"


class KellyRequest(Request):
    odds: Odds
    probability: Annotated[Number, msgspec.Meta(description="Your probability that the bet wins, 0 to 1.")]
    fraction: Annotated[Number, msgspec.Meta(description="Kelly multiplier (0.5 is half Kelly), above 0 and at most 1.")] = 1.0
    cap: Annotated[Number, msgspec.Meta(description="Largest share of bankroll to stake, above 0 and at most 1.")] = 1.0
    bankroll: Number | None = None
    format: PriceFormat = "decimal"


class ArbitrageRequest(Request):
    odds: Annotated[list[Odds], msgspec.Meta(min_length=2, max_length=100, description="The best price on each outcome of one market, from any books.")]
    stake: Annotated[Number, msgspec.Meta(description="Total to stake across the outcomes.")]
    format: PriceFormat = "decimal"


class MiddlePosition(Request):
    side: Annotated[Side, msgspec.Meta(description="home or away for a spread; over or under for a total.")]
    line: Annotated[Number, msgspec.Meta(description="The spread (added to this side's score) or the total; whole or half points.")]
    odds: Odds
    stake: Number


class MiddleRequest(Request):
    kind: MiddleKind
    positions: Annotated[list[MiddlePosition], msgspec.Meta(min_length=2, max_length=2)]
    format: PriceFormat = "decimal"


class ClvRequest(Request):
    taken_odds: Odds
    closing_probability: Annotated[Number, msgspec.Meta(description="The no-vig closing probability of your side. Send this, or `closing_odds` and `selection`.")] | None = None
    closing_odds: Annotated[list[Odds], msgspec.Meta(min_length=2, max_length=100, description="The closing prices of every outcome of the market, devigged with `method`; with `selection`.")] | None = None
    selection: Annotated[int, msgspec.Meta(ge=0, le=99, description="Index of your side in `closing_odds`, from 0.")] | None = None
    method: Method = "multiplicative"
    format: PriceFormat = "decimal"


# --- results ----------------------------------------------------------------------------------

class PriceDisplay(msgspec.Struct, kw_only=True):
    decimal: str
    american: str
    fractional: str
    implied: str


class ConvertResult(msgspec.Struct, kw_only=True):
    decimal: float
    american: float
    fractional: str
    implied: float
    display: PriceDisplay


class DevigResult(msgspec.Struct, kw_only=True):
    method: Method
    probabilities: list[float]
    fair_odds: list[float | None]
    fair_odds_american: list[float | None]
    overround: float
    hold: float
    parameter: float | None
    parameter_name: str | None
    in_range: bool
    messages: list[str]


class PayoutResult(msgspec.Struct, kw_only=True):
    decimal_odds: float
    payout: float
    profit: float
    break_even_probability: float


class ParlayResult(msgspec.Struct, kw_only=True):
    decimal_odds: float
    american_odds: Annotated[float | None, msgspec.Meta(description="null when no leg counts (decimal odds 1)")]
    implied_probability: float
    legs_counted: list[int]
    legs_removed: list[int]
    lost: bool
    payout: float
    profit: float


class EvResult(msgspec.Struct, kw_only=True):
    decimal_odds: float
    expected_value: float
    edge: float
    probability_edge: float
    break_even_probability: float
    fair_odds: float | None


class KellyResult(msgspec.Struct, kw_only=True):
    decimal_odds: float
    edge: float
    full_fraction: float
    stake_fraction: float
    capped: bool
    stake: float | None
    messages: list[str]


class ArbitrageResult(msgspec.Struct, kw_only=True):
    is_arbitrage: bool
    booksum: float
    stakes: list[float]
    payout: float
    profit: float
    roi: float


class MiddleScenario(msgspec.Struct, kw_only=True):
    # null: unbounded (sent as null, but optional in the schema: OpenAPI examples drop nulls)
    low: Annotated[int | None, msgspec.Meta(description="Lowest outcome of the range; null: unbounded below")] = None
    high: Annotated[int | None, msgspec.Meta(description="Highest outcome of the range; null: unbounded above")] = None
    grades: list[Grade]
    profit: float


class MiddleResult(msgspec.Struct, kw_only=True):
    is_middle: bool
    measure: Literal["home_margin", "total_points"]
    middle_outcomes: list[int]
    profit_if_middle: float | None
    worst_profit: float
    break_even_middle_probability: float | None
    scenarios: list[MiddleScenario]


class ClvResult(msgspec.Struct, kw_only=True):
    taken_decimal_odds: float
    taken_implied_probability: float
    closing_probability: float
    closing_fair_odds: float
    clv: float
    probability_edge: float
    beat_close: bool


# --- responses --------------------------------------------------------------------------------

class Calculation(msgspec.Struct, kw_only=True):
    object: Literal["calculation"] = "calculation"
    name: str  # each calculation narrows it to its own name
    formula: Annotated[str, msgspec.Meta(description="The formula card this result comes from, as `card_id@version`.")]
    formulas: Annotated[list[str], msgspec.Meta(description="Every formula card used, the main one first.")]
    source: str
    as_of: datetime
    rg_line: str


class ConvertCalculation(Calculation, kw_only=True):
    name: Literal["convert"] = "convert"
    inputs: ConvertRequest
    result: ConvertResult


class DevigCalculation(Calculation, kw_only=True):
    name: Literal["devig"] = "devig"
    inputs: DevigRequest
    result: DevigResult


class PayoutCalculation(Calculation, kw_only=True):
    name: Literal["payout"] = "payout"
    inputs: PayoutRequest
    result: PayoutResult


class ParlayCalculation(Calculation, kw_only=True):
    name: Literal["parlay"] = "parlay"
    inputs: ParlayRequest
    result: ParlayResult


class EvCalculation(Calculation, kw_only=True):
    name: Literal["ev"] = "ev"
    inputs: EvRequest
    result: EvResult


class KellyCalculation(Calculation, kw_only=True):
    name: Literal["kelly"] = "kelly"
    inputs: KellyRequest
    result: KellyResult


class ArbitrageCalculation(Calculation, kw_only=True):
    name: Literal["arbitrage"] = "arbitrage"
    inputs: ArbitrageRequest
    result: ArbitrageResult


class MiddleCalculation(Calculation, kw_only=True):
    name: Literal["middle"] = "middle"
    inputs: MiddleRequest
    result: MiddleResult


class ClvCalculation(Calculation, kw_only=True):
    name: Literal["clv"] = "clv"
    inputs: ClvRequest
    result: ClvResult
