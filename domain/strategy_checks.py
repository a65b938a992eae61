"""The check programs strategies run (`POST /v1/strategies/{id}:check`): the caller's numbers
through the engine's own maths, as named figures, each with the formula card it comes from.

What each program takes and computes is declared in domain/strategy_programs.py; here is how it
computes, keyed by the same names (`RUNNERS`). No formula is written here: every figure comes
from `bets`, `devig` or `middles`, the same functions the calculations API runs. A figure
with no card is plain arithmetic on other figures (a count, a product) and says so.

Pure: no I/O, exact rationals throughout (`InvalidInput` names the input that cannot be used).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from domain import bets, devig, middles, prices
from domain.exact import InvalidInput, exact
from domain.strategy_programs import InputSpec

Value = Fraction | bool | int | tuple | None
MAX_ITEMS = 100


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
        if not isinstance(raw, str) or (spec.choices and raw not in spec.choices):
            raise InvalidInput(name, f"expected one of {', '.join(spec.choices)}" if spec.choices else "expected a name")
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
    d, p, unit = v["price"], v["probability"], v["unit"]
    k = bets.kelly(d, p)
    return {**_ev_figures(d, p), "full_fraction": k.full_fraction, "unit": unit,
            "excess_over_kelly": unit - k.full_fraction,
            "stake": None if v.get("bankroll") is None else v["bankroll"] * unit}


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
    out: dict[str, Value] = {"booksum": a.booksum, "overround": devig.overround(quotes),
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
    result = devig.devig(method, quotes)
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
        fair = devig.devig(v.get("method", "multiplicative"), closing_prices)
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


RUNNERS: dict[str, Callable[[Mapping[str, Any]], dict[str, Value]]] = {
    "kelly": _kelly, "flat": _flat, "ev": _ev, "shop": _shop, "arbitrage": _arbitrage, "devig": _devig, "clv": _clv,
    "middle": _middle, "parlay": _parlay, "progression": _progression, "none": _none,
}


def run(program: str, values: Mapping[str, Any]) -> dict[str, Value]:
    """The program's figures on read inputs (`read_input`); missing optional inputs are absent."""
    return RUNNERS[program](values)
