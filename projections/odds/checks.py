"""The check programs strategies run (`POST /v1/strategies/{id}:check`): the caller's numbers
through the engine's own maths, as named figures, each with the formula card it comes from.

A program is the maths of a kind of decision (size a stake, find an arbitrage, measure CLV...).
It declares its inputs (what the caller may send) and its figures (what it computes); a strategy
file names its program, describes its inputs (which are execution inputs, what is assumed) and
states its preconditions as tests on those figures. No formula is written here: every figure
comes from `bets`, `devig_exact` or `middles`, the same functions the calculations API runs.
A figure with no card is plain arithmetic on other figures (a count, a product) and says so.

Pure: no I/O, exact rationals throughout (`InvalidInput` names the input that cannot be used).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

from projections.odds import bets, devig_exact, middles, prices
from projections.odds.devig import METHODS
from projections.odds.exact import InvalidInput, exact

InputKind = Literal["probability", "price", "prices", "probabilities", "amount", "share", "index", "line", "choice"]
Value = Fraction | bool | int | tuple | None
MAX_ITEMS = 100


@dataclass(frozen=True)
class InputSpec:
    id: str
    kind: InputKind
    required: bool  # the program cannot run without it
    choices: tuple[str, ...] = ()  # for kind "choice"


@dataclass(frozen=True)
class FigureSpec:
    id: str
    card: str | None  # the formula card it comes from (None: arithmetic on other figures, said in `what`)
    what: str


@dataclass(frozen=True)
class Program:
    name: str
    inputs: tuple[InputSpec, ...]
    figures: tuple[FigureSpec, ...]
    run: Callable[[Mapping[str, Any]], dict[str, Value]]
    sizes_stake: bool = False  # it computes a stake (a caller may ask it to size one)

    def input(self, input_id: str) -> InputSpec | None:
        return next((i for i in self.inputs if i.id == input_id), None)

    def figure(self, figure_id: str) -> FigureSpec | None:
        return next((f for f in self.figures if f.id == figure_id), None)


# ---- reading inputs ---------------------------------------------------------------------------


def read_input(spec: InputSpec, raw: Any, price_format: str) -> Any:
    """One input as the maths takes it; `InvalidInput` names it (`prices[2]` for one item)."""
    name = spec.id
    if spec.kind in ("prices", "probabilities"):
        if not isinstance(raw, list) or not 1 <= len(raw) <= MAX_ITEMS:
            raise InvalidInput(name, f"expected a list of 1 to {MAX_ITEMS} numbers")
        item = "price" if spec.kind == "prices" else "probability"
        return tuple(read_input(InputSpec(f"{name}[{i}]", item, True), x, price_format) for i, x in enumerate(raw))
    if isinstance(raw, list):
        raise InvalidInput(name, "expected one number, got a list")
    if spec.kind == "choice":
        if raw not in spec.choices:
            raise InvalidInput(name, f"expected one of {', '.join(spec.choices)}")
        return raw
    if spec.kind == "price":
        return prices.to_decimal(raw, price_format, name)  # type: ignore[arg-type]
    x = exact(raw, name)
    if spec.kind == "probability":
        return bets.check_probability(x, name)
    if spec.kind == "amount":
        return bets.check_stake(x, name)
    if spec.kind == "share":
        if not 0 < x <= 1:
            raise InvalidInput(name, "must be above 0 and at most 1")
        return x
    if spec.kind == "index":
        if x.denominator != 1 or not 0 <= x < MAX_ITEMS:
            raise InvalidInput(name, f"must be a whole number from 0 to {MAX_ITEMS - 1}")
        return int(x)
    return x  # a line: any number the maths bounds itself


# ---- the programs -----------------------------------------------------------------------------

_DECIMAL = FigureSpec("decimal_odds", "odds.convert", "the price as decimal odds")
_BREAK_EVEN = FigureSpec("break_even_probability", "bet.payout", "the win probability at which the price breaks even: 1/d")
_EDGE = FigureSpec("edge", "bet.ev", "expected return per unit staked at your probability: p d - 1")
_PROB_EDGE = FigureSpec("probability_edge", "bet.ev", "your probability less the break-even probability")


def _ev_figures(d: Fraction, p: Fraction | None) -> dict[str, Value]:
    out: dict[str, Value] = {"decimal_odds": d, "break_even_probability": bets.break_even(d)}
    if p is not None:
        ev = bets.expected_value(d, p)
        out.update(edge=ev.edge, probability_edge=ev.probability_edge)
    return out


def _kelly(v: Mapping[str, Any]) -> dict[str, Value]:
    d, p = v["price"], v["probability"]
    k = bets.kelly(d, p, v.get("fraction", Fraction(1)), v.get("cap", Fraction(1)), v.get("bankroll"))
    return {**_ev_figures(d, p), "full_fraction": k.full_fraction, "stake_fraction": k.stake_fraction,
            "capped": k.capped, "stake": k.stake}


def _ev(v: Mapping[str, Any]) -> dict[str, Value]:
    d, p = v["price"], v.get("probability")
    out = _ev_figures(d, p)
    if p is not None and v.get("stake") is not None:
        out["expected_value"] = bets.expected_value(d, p, v["stake"]).expected_value
    return out


def _flat(v: Mapping[str, Any]) -> dict[str, Value]:
    d, p, unit = v["price"], v["probability"], v.get("unit", Fraction(1, 100))
    k = bets.kelly(d, p)
    out = {**_ev_figures(d, p), "full_fraction": k.full_fraction, "unit": unit,
           "stake": None if v.get("bankroll") is None else v["bankroll"] * unit}
    return out


def _shop(v: Mapping[str, Any]) -> dict[str, Value]:
    quotes: Sequence[Fraction] = v["prices"]
    best, worst = max(quotes), min(quotes)
    out: dict[str, Value] = {
        "books": len(quotes), "best_index": quotes.index(best), "best_price": best,
        "break_even_best": bets.break_even(best), "break_even_worst": bets.break_even(worst),
        "break_even_saved": bets.break_even(worst) - bets.break_even(best),
    }
    if v.get("probability") is not None:
        out["edge_at_best"] = bets.expected_value(best, v["probability"]).edge
    return out


def _arbitrage(v: Mapping[str, Any]) -> dict[str, Value]:
    quotes = v["prices"]
    if len(quotes) < 2:
        raise InvalidInput("prices", "an arbitrage needs the best price of at least two outcomes")
    stake = v.get("stake")
    a = bets.arbitrage(quotes, stake if stake is not None else Fraction(1))
    out: dict[str, Value] = {"booksum": a.booksum, "overround": devig_exact.overround(quotes),
                             "is_arbitrage": a.is_arbitrage, "roi": a.roi}
    if stake is not None:
        out.update(stakes=a.stakes, payout=a.payout, profit=a.profit)
    else:
        out["stake_shares"] = a.stakes
    return out


def _devig(v: Mapping[str, Any]) -> dict[str, Value]:
    quotes, method = v["prices"], v.get("method", "multiplicative")
    if len(quotes) < 2:
        raise InvalidInput("prices", "a market needs the prices of at least two outcomes")
    result = devig_exact.devig(method, quotes)
    if not result.converged:
        raise InvalidInput("method", " ".join(result.messages))
    out: dict[str, Value] = {"overround": result.overround, "hold": result.hold,
                             "fair_probabilities": result.probabilities}
    selection = v.get("selection")
    if selection is not None:
        if selection >= len(quotes):
            raise InvalidInput("selection", f"your side's index in prices, 0 to {len(quotes) - 1}")
        fair = result.probabilities[selection]
        out["fair_probability"] = fair
        if v.get("probability") is not None:
            out["probability_edge_vs_fair"] = v["probability"] - fair
    return out


def _clv(v: Mapping[str, Any]) -> dict[str, Value]:
    taken = v["price"]
    closing_prices, selection, closing = v.get("closing_prices"), v.get("selection"), v.get("closing_probability")
    if (closing_prices is None) == (closing is None):
        raise InvalidInput("closing_probability", "send closing_probability, or closing_prices with selection")
    if closing_prices is not None:
        if selection is None or selection >= len(closing_prices):
            raise InvalidInput("selection", f"with closing_prices, your side's index, 0 to {len(closing_prices) - 1}")
        fair = devig_exact.devig(v.get("method", "multiplicative"), closing_prices)
        closing = fair.probabilities[selection]
        if not 0 < closing < 1:
            raise InvalidInput("method", "this method puts your side outside (0, 1); choose another method")
    c = bets.closing_line_value(taken, closing)
    return {"decimal_odds": taken, "closing_probability": closing, "closing_fair_odds": c.closing_fair_odds,
            "clv": c.clv, "probability_edge": c.probability_edge, "beat_close": c.beat_close}


def _middle(v: Mapping[str, Any]) -> dict[str, Value]:
    kind = v["kind"]
    a = middles.Position(v["side_a"], v["line_a"], v["price_a"], v["stake_a"])
    b = middles.Position(v["side_b"], v["line_b"], v["price_b"], v["stake_b"])
    m = middles.middle(kind, a, b)
    out: dict[str, Value] = {"is_middle": m.is_middle, "middle_outcomes": m.middle_outcomes,
                             "profit_if_middle": m.profit_if_middle, "worst_profit": m.worst_profit,
                             "break_even_middle_probability": m.break_even_middle_probability}
    p = v.get("probability")
    if p is not None and m.break_even_middle_probability is not None:
        out["middle_probability_edge"] = p - m.break_even_middle_probability
    return out


def _parlay(v: Mapping[str, Any]) -> dict[str, Value]:
    legs, mine = v["prices"], v["probabilities"]
    if len(legs) < 2 or len(mine) != len(legs):
        raise InvalidInput("probabilities", "one probability per leg, and at least two legs")
    stake = v.get("stake") or Fraction(1)
    parlay = bets.parlay([(d, "open") for d in legs], stake)
    joint = Fraction(1)
    for p in mine:
        joint *= p
    ev = bets.expected_value(parlay.decimal_odds, joint)
    legs_with_edge = sum(1 for d, p in zip(legs, mine) if bets.expected_value(d, p).edge > 0)
    return {"parlay_odds": parlay.decimal_odds, "break_even_probability": bets.break_even(parlay.decimal_odds),
            "joint_probability": joint, "edge": ev.edge, "legs": len(legs), "legs_with_edge": legs_with_edge}


def _progression(v: Mapping[str, Any]) -> dict[str, Value]:
    """Doubling after each loss (martingale): the losses in a row the bankroll can pay for, and
    the chance of that run; the expectation per unit staked is the bet's edge, whatever the sizes."""
    base, bankroll = v["base_stake"], v["bankroll"]
    d, p = v["price"], v.get("probability")
    if base > bankroll:
        raise InvalidInput("base_stake", "must not be more than the bankroll")
    n, staked = 0, Fraction(0)
    while staked + base * 2**n <= bankroll:  # a run of n losses stakes base * (2^n - 1) in all
        staked += base * 2**n
        n += 1
    out: dict[str, Value] = {**_ev_figures(d, p), "losses_to_ruin": n, "amount_at_risk": staked,
                             "target_win": base * (d - 1)}
    if p is not None:
        out["ruin_probability_per_series"] = (1 - p) ** n
    return out


def _none(v: Mapping[str, Any]) -> dict[str, Value]:
    return {}


_P = InputSpec("probability", "probability", True)
_P_OPT = InputSpec("probability", "probability", False)
_PRICE = InputSpec("price", "price", True)
_PRICES = InputSpec("prices", "prices", True)
_BANKROLL_OPT = InputSpec("bankroll", "amount", False)
_STAKE_OPT = InputSpec("stake", "amount", False)
_METHOD = InputSpec("method", "choice", False, METHODS)
_SELECTION_OPT = InputSpec("selection", "index", False)

PROGRAMS: dict[str, Program] = {p.name: p for p in (
    Program("kelly", (_P, _PRICE, _BANKROLL_OPT, InputSpec("fraction", "share", False), InputSpec("cap", "share", False)),
            (_DECIMAL, _BREAK_EVEN, _EDGE, _PROB_EDGE,
             FigureSpec("full_fraction", "bet.kelly", "Kelly's share of bankroll: (p d - 1) / (d - 1)"),
             FigureSpec("stake_fraction", "bet.kelly", "the share to stake: full fraction times the multiplier, capped"),
             FigureSpec("capped", "bet.kelly", "whether the cap cut the stake"),
             FigureSpec("stake", "bet.kelly", "bankroll times the stake share (null without a bankroll)")),
            _kelly, sizes_stake=True),
    Program("flat", (_P, _PRICE, _BANKROLL_OPT, InputSpec("unit", "share", False)),
            (_DECIMAL, _BREAK_EVEN, _EDGE, _PROB_EDGE,
             FigureSpec("full_fraction", "bet.kelly", "Kelly's share of bankroll, for comparison with the unit"),
             FigureSpec("unit", None, "the flat share of bankroll staked on every bet"),
             FigureSpec("stake", None, "bankroll times the unit (null without a bankroll)")),
            _flat, sizes_stake=True),
    Program("ev", (_P_OPT, _PRICE, _STAKE_OPT),
            (_DECIMAL, _BREAK_EVEN, _EDGE, _PROB_EDGE,
             FigureSpec("expected_value", "bet.ev", "money won on average at this stake (with probability and stake)")),
            _ev),
    Program("shop", (_PRICES, _P_OPT),
            (FigureSpec("books", None, "how many prices were compared (a count)"),
             FigureSpec("best_index", None, "the position of the best price in prices, from 0"),
             FigureSpec("best_price", "odds.convert", "the highest decimal odds"),
             FigureSpec("break_even_best", "bet.payout", "break-even probability at the best price"),
             FigureSpec("break_even_worst", "bet.payout", "break-even probability at the worst price"),
             FigureSpec("break_even_saved", None, "break-even at the worst price less break-even at the best"),
             FigureSpec("edge_at_best", "bet.ev", "your edge at the best price (with a probability)")),
            _shop),
    Program("arbitrage", (_PRICES, _STAKE_OPT),
            (FigureSpec("booksum", "bet.arbitrage", "the sum of 1/d over the outcomes"),
             FigureSpec("overround", "odds.overround", "booksum less 1: below zero is an arbitrage"),
             FigureSpec("is_arbitrage", "bet.arbitrage", "booksum below 1: a profit whatever happens"),
             FigureSpec("roi", "bet.arbitrage", "the guaranteed return on the total staked: 1/booksum - 1"),
             FigureSpec("stakes", "bet.arbitrage", "stake per outcome that pays the same on every outcome"),
             FigureSpec("stake_shares", "bet.arbitrage", "share of the total to stake on each outcome (without a stake)"),
             FigureSpec("payout", "bet.arbitrage", "what any outcome returns"),
             FigureSpec("profit", "bet.arbitrage", "payout less the total staked")),
            _arbitrage),
    Program("devig", (_PRICES, _METHOD, _SELECTION_OPT, _P_OPT),
            (FigureSpec("overround", "odds.overround", "how far the implied probabilities sum above 1"),
             FigureSpec("hold", "odds.overround", "the book's share of money staked in proportion to its prices"),
             FigureSpec("fair_probabilities", "devig.multiplicative", "each outcome's probability with the margin removed"),
             FigureSpec("fair_probability", "devig.multiplicative", "the fair probability of your side (with selection)"),
             FigureSpec("probability_edge_vs_fair", None, "your probability less the fair probability")),
            _devig),
    Program("clv", (_PRICE, InputSpec("closing_prices", "prices", False), _SELECTION_OPT,
                    InputSpec("closing_probability", "probability", False), _METHOD),
            (_DECIMAL,
             FigureSpec("closing_probability", "devig.multiplicative", "the no-vig closing probability of your side"),
             FigureSpec("closing_fair_odds", "bet.clv", "1 / the closing probability"),
             FigureSpec("clv", "bet.clv", "expected return per unit at the closing fair price"),
             FigureSpec("probability_edge", "bet.clv", "closing probability less your price's break-even"),
             FigureSpec("beat_close", "bet.clv", "whether CLV is above zero")),
            _clv),
    Program("middle", (InputSpec("kind", "choice", True, ("spread", "total")),
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
             FigureSpec("middle_probability_edge", None, "your probability of the middle less the break-even one")),
            _middle),
    Program("parlay", (_PRICES, InputSpec("probabilities", "probabilities", True), _STAKE_OPT),
            (FigureSpec("parlay_odds", "bet.parlay", "the product of the legs' decimal odds"),
             FigureSpec("break_even_probability", "bet.payout", "1 / the parlay's odds"),
             FigureSpec("joint_probability", None, "the product of your leg probabilities (legs taken as independent)"),
             FigureSpec("edge", "bet.ev", "expected return per unit at the parlay's odds and the joint probability"),
             FigureSpec("legs", None, "how many legs (a count)"),
             FigureSpec("legs_with_edge", "bet.ev", "how many legs have an edge on their own")),
            _parlay),
    Program("progression", (InputSpec("base_stake", "amount", True), InputSpec("bankroll", "amount", True), _PRICE, _P_OPT),
            (_DECIMAL, _BREAK_EVEN, _EDGE, _PROB_EDGE,
             FigureSpec("losses_to_ruin", None, "losses in a row the bankroll pays for when every loss doubles the stake"),
             FigureSpec("amount_at_risk", None, "what that run of losses costs: base stake times (2^n - 1)"),
             FigureSpec("target_win", "bet.payout", "what a series wins when it ends in a win: base stake times (d - 1)"),
             FigureSpec("ruin_probability_per_series", None, "chance of that many losses in a row: (1 - p)^n")),
            _progression),
    Program("none", (), (), _none),
)}


def run(program: Program, values: Mapping[str, Any]) -> dict[str, Value]:
    """The program's figures on read inputs (`read_input`); missing optional inputs are absent."""
    return program.run(values)
