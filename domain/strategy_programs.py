"""The check programs a strategy can run (`POST /v1/strategies/{id}:check`): what each takes
and what it computes, with the formula card each figure comes from.

A program is the maths of a kind of decision (size a stake, find an arbitrage, measure CLV...).
A strategy file names its program, describes its inputs (which are execution inputs, what is
assumed) and states its preconditions as tests on the program's figures; the ingest checks a
file against its program here. The maths itself is in domain/strategy_checks.py (the
calculations' own functions), keyed by the same names. Pure data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

InputKind = Literal["probability", "price", "prices", "probabilities", "amount", "share", "index", "line", "choice"]


@dataclass(frozen=True)
class InputSpec:
    id: str
    kind: InputKind
    required: bool  # the program cannot run without it
    choices: tuple[str, ...] = ()  # for kind "choice" (empty: the maths checks the value)


@dataclass(frozen=True)
class FigureSpec:
    id: str
    card: str | None  # the formula card it comes from (None: arithmetic on other figures, said in `what`)
    what: str


@dataclass(frozen=True)
class ProgramSpec:
    name: str
    inputs: tuple[InputSpec, ...]
    figures: tuple[FigureSpec, ...]
    sizes_stake: bool = False  # it computes a stake (a caller may ask it to size one)

    def input(self, input_id: str) -> InputSpec | None:
        return next((i for i in self.inputs if i.id == input_id), None)


_DECIMAL = FigureSpec("decimal_odds", "odds.convert", "the price as decimal odds")
_BREAK_EVEN = FigureSpec("break_even_probability", "bet.payout", "the win probability at which the price breaks even: 1/d")
_EDGE = FigureSpec("edge", "bet.ev", "expected return per unit staked at your probability: p d - 1")
_PROB_EDGE = FigureSpec("probability_edge", "bet.ev", "your probability less the break-even probability")


_P = InputSpec("probability", "probability", True)
_P_OPT = InputSpec("probability", "probability", False)
_PRICE = InputSpec("price", "price", True)
_PRICES = InputSpec("prices", "prices", True)
_BANKROLL_OPT = InputSpec("bankroll", "amount", False)
_STAKE_OPT = InputSpec("stake", "amount", False)
_METHOD = InputSpec("method", "choice", False)  # the margin-removal method: the maths says which exist
_SELECTION_OPT = InputSpec("selection", "index", False)

PROGRAMS: dict[str, ProgramSpec] = {p.name: p for p in (
    ProgramSpec("kelly", (_P, _PRICE, _BANKROLL_OPT, InputSpec("fraction", "share", False), InputSpec("cap", "share", False)),
            (_DECIMAL, _BREAK_EVEN, _EDGE, _PROB_EDGE,
             FigureSpec("full_fraction", "bet.kelly", "Kelly's share of bankroll: (p d - 1) / (d - 1)"),
             FigureSpec("stake_fraction", "bet.kelly", "the share to stake: full fraction times the multiplier, capped"),
             FigureSpec("capped", "bet.kelly", "whether the cap cut the stake"),
             FigureSpec("stake", "bet.kelly", "bankroll times the stake share (null without a bankroll)")), sizes_stake=True),
    ProgramSpec("flat", (_P, _PRICE, _BANKROLL_OPT, InputSpec("unit", "share", True)),
            (_DECIMAL, _BREAK_EVEN, _EDGE, _PROB_EDGE,
             FigureSpec("full_fraction", "bet.kelly", "Kelly's share of bankroll, for comparison with the unit"),
             FigureSpec("unit", None, "the flat share of bankroll staked on every bet"),
             FigureSpec("excess_over_kelly", None, "the unit less Kelly's share: above zero stakes more than Kelly"),
             FigureSpec("stake", None, "bankroll times the unit (null without a bankroll)")), sizes_stake=True),
    ProgramSpec("ev", (_P_OPT, _PRICE, _STAKE_OPT),
            (_DECIMAL, _BREAK_EVEN, _EDGE, _PROB_EDGE,
             FigureSpec("expected_value", "bet.ev", "money won on average at this stake (with probability and stake)"))),
    ProgramSpec("shop", (_PRICES, _P_OPT),
            (FigureSpec("books", None, "how many prices were compared (a count)"),
             FigureSpec("best_index", None, "the position of the best price in prices, from 0"),
             FigureSpec("best_price", "odds.convert", "the highest decimal odds"),
             FigureSpec("break_even_best", "bet.payout", "break-even probability at the best price"),
             FigureSpec("break_even_worst", "bet.payout", "break-even probability at the worst price"),
             FigureSpec("break_even_saved", None, "break-even at the worst price less break-even at the best"),
             FigureSpec("edge_at_best", "bet.ev", "your edge at the best price (with a probability)"))),
    ProgramSpec("arbitrage", (_PRICES, _STAKE_OPT),
            (FigureSpec("booksum", "bet.arbitrage", "the sum of 1/d over the outcomes"),
             FigureSpec("overround", "odds.overround", "booksum less 1: below zero is an arbitrage"),
             FigureSpec("is_arbitrage", "bet.arbitrage", "booksum below 1: a profit whatever happens"),
             FigureSpec("roi", "bet.arbitrage", "the guaranteed return on the total staked: 1/booksum - 1"),
             FigureSpec("stakes", "bet.arbitrage", "stake per outcome that pays the same on every outcome"),
             FigureSpec("stake_shares", "bet.arbitrage", "share of the total to stake on each outcome (without a stake)"),
             FigureSpec("payout", "bet.arbitrage", "what any outcome returns"),
             FigureSpec("profit", "bet.arbitrage", "payout less the total staked"))),
    ProgramSpec("devig", (_PRICES, _METHOD, _SELECTION_OPT, _P_OPT),
            (FigureSpec("overround", "odds.overround", "how far the implied probabilities sum above 1"),
             FigureSpec("hold", "odds.overround", "the book's share of money staked in proportion to its prices"),
             FigureSpec("fair_probabilities", "devig.multiplicative", "each outcome's probability with the margin removed"),
             FigureSpec("fair_probability", "devig.multiplicative", "the fair probability of your side (with selection)"),
             FigureSpec("probability_edge_vs_fair", None, "your probability less the fair probability"))),
    ProgramSpec("clv", (_PRICE, InputSpec("closing_prices", "prices", False), _SELECTION_OPT,
                    InputSpec("closing_probability", "probability", False), _METHOD),
            (_DECIMAL,
             FigureSpec("closing_probability", "devig.multiplicative", "the no-vig closing probability of your side"),
             FigureSpec("closing_fair_odds", "bet.clv", "1 / the closing probability"),
             FigureSpec("clv", "bet.clv", "expected return per unit at the closing fair price"),
             FigureSpec("probability_edge", "bet.clv", "closing probability less your price's break-even"),
             FigureSpec("beat_close", "bet.clv", "whether CLV is above zero"))),
    ProgramSpec("middle", (InputSpec("kind", "choice", True, ("spread", "total")),
                       InputSpec("side_a", "choice", True, ("home", "away", "over", "under")),
                       InputSpec("line_a", "line", True), InputSpec("price_a", "price", True),
                       InputSpec("stake_a", "amount", True),
                       InputSpec("side_b", "choice", True, ("home", "away", "over", "under")),
                       InputSpec("line_b", "line", True), InputSpec("price_b", "price", True),
                       InputSpec("stake_b", "amount", True), _P_OPT),
            (FigureSpec("is_middle", "bet.middle", "some final score wins both positions"),
             FigureSpec("middle_outcomes", "bet.middle", "the scores (margins or totals) where both win"),
             FigureSpec("profit_if_middle", "bet.middle", "profit when the score lands in the middle"),
             FigureSpec("worst_profit", "bet.middle", "the worst profit over every score"),
             FigureSpec("break_even_middle_probability", "bet.middle", "chance of the middle that breaks even"),
             FigureSpec("middle_probability_edge", None, "your probability of the middle less the break-even one"))),
    ProgramSpec("parlay", (_PRICES, InputSpec("probabilities", "probabilities", True), _STAKE_OPT),
            (FigureSpec("parlay_odds", "bet.parlay", "the product of the legs' decimal odds"),
             FigureSpec("break_even_probability", "bet.payout", "1 / the parlay's odds"),
             FigureSpec("joint_probability", None, "the product of your leg probabilities (legs taken as independent)"),
             FigureSpec("edge", "bet.ev", "expected return per unit at the parlay's odds and the joint probability"),
             FigureSpec("legs", None, "how many legs (a count)"),
             FigureSpec("legs_with_edge", "bet.ev", "how many legs have an edge on their own"))),
    ProgramSpec("progression", (InputSpec("base_stake", "amount", True), InputSpec("bankroll", "amount", True), _PRICE, _P_OPT),
            (_DECIMAL, _BREAK_EVEN, _EDGE, _PROB_EDGE,
             FigureSpec("losses_to_ruin", None, "losses in a row the bankroll pays for when every loss doubles the stake"),
             FigureSpec("amount_at_risk", None, "what that run of losses costs: base stake times (2^n - 1)"),
             FigureSpec("target_win", "bet.payout", "what a series wins when it ends in a win: base stake times (d - 1)"),
             FigureSpec("ruin_probability_per_series", None, "chance of that many losses in a row: (1 - p)^n"))),
    ProgramSpec("none", (), ()),
)}
