"""`svc calc`: the calculations API's maths on the command line (same code, no server needed).

Prices are passed on as text, so they are read exactly; American odds such as -110 may follow
`--odds` as they are. `--json` prints one JSON object; bad input exits 1 with a message.
"""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer
from rich.table import Table

from cli.common import JsonFlag, console, err_console, fail, print_json

calc_app = typer.Typer(
    help="Betting maths: convert prices, remove the margin, payouts, parlays, EV, Kelly, arbitrage, middles, CLV.",
    no_args_is_help=True,
)
# prices may start with '-' (American odds): unknown "options" such as -110 stay positional
VARIADIC = {"ignore_unknown_options": True}

Prices = Annotated[Optional[list[str]], typer.Argument(metavar="P1 P2 ...", help="Prices, in --format", show_default=False)]
OddsMarker = Annotated[bool, typer.Option("--odds", help="Marks the start of the prices (optional)")]
Format = Annotated[str, typer.Option("--format", help="decimal, american, fractional or implied")]
Method = Annotated[str, typer.Option("--method", help="multiplicative, additive, power, shin or odds_ratio")]
Odds = Annotated[str, typer.Option("--odds", help="The price, in --format")]
Stake = Annotated[str, typer.Option("--stake", help="Amount staked")]

DEVIG_KEYS = ("method", "probabilities", "fair_odds", "overround", "hold", "parameter")


def register(app: typer.Typer) -> None:
    app.add_typer(calc_app, name="calc")


def _calculate(name: str, body: dict[str, Any]) -> Any:
    """Decode `body` as the API would and run it; exits with the problem's detail on bad input."""
    import msgspec

    from calc import run

    try:
        request = run.decode(name, msgspec.json.encode({k: v for k, v in body.items() if v is not None}))
        return run.calculate(name, request)
    except msgspec.ValidationError as exc:
        fail(_plain(str(exc)))
    except run.Refused as exc:
        fail(exc.detail)


def _plain(message: str) -> str:
    """msgspec's "Expected ... - at `$.odds[1]`" as "odds[1]: ..."."""
    text, _, where = message.partition(" - at `$.")
    field = where.rstrip("`") or "input"
    if "matching regex" in text:
        text = "not a number (write e.g. 1.91, -110, 10/11 or evens)"
    return f"{field}: {text}"


def _prices(values: list[str] | None, what: str = "prices") -> list[str]:
    if not values:
        fail(f"give the {what} after --odds, e.g. --odds -110 -110")
    return values


def _show(calculation: Any, as_json: bool, keys: tuple[str, ...] | None = None) -> None:
    import msgspec

    result = msgspec.to_builtins(calculation.result)
    for message in result.get("messages", []):
        err_console.print(f"[yellow]warning:[/yellow] {message}")
    if as_json:
        print_json({k: result[k] for k in keys} if keys else result)
        return
    table = Table(title=f"{calculation.name} ({calculation.formula})", show_header=False)
    for key, value in result.items():
        if key != "messages":
            table.add_row(key, _text(value))
    console.print(table)
    console.print(calculation.rg_line, style="dim")


def _text(value: Any) -> str:
    if isinstance(value, list) and value and isinstance(value[0], dict) and "grades" in value[0]:
        return "\n".join(_scenario(s) for s in value)
    if isinstance(value, list):
        return ", ".join(_text(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k} {_text(v)}" for k, v in value.items())
    return "-" if value is None else str(value)


def _scenario(s: dict[str, Any]) -> str:
    low, high = s["low"], s["high"]
    where = f"{low} to {high}" if low is not None and high is not None else f"<= {high}" if low is None else f">= {low}"
    return f"{where}: {s['grades'][0]} / {s['grades'][1]}, profit {s['profit']}"


@calc_app.command("devig", context_settings=VARIADIC)
def devig(prices: Prices = None, _odds: OddsMarker = False, method: Method = "multiplicative",
          price_format: Format = "decimal", as_json: JsonFlag = False) -> None:
    """Fair probabilities of one book's prices for every outcome: svc calc devig --method shin --odds -110 -110 --format american"""
    body = {"odds": _prices(prices), "method": method, "format": price_format}
    _show(_calculate("devig", body), as_json, DEVIG_KEYS)


@calc_app.command("convert", context_settings=VARIADIC)
def convert(odds: Odds, price_format: Format = "decimal", as_json: JsonFlag = False) -> None:
    """One price in every format: svc calc convert --odds -110 --format american"""
    _show(_calculate("convert", {"price": odds, "format": price_format}), as_json)


@calc_app.command("payout", context_settings=VARIADIC)
def payout(odds: Odds, stake: Stake, price_format: Format = "decimal", as_json: JsonFlag = False) -> None:
    """Payout, profit and break-even probability: svc calc payout --odds 5/2 --stake 20 --format fractional"""
    _show(_calculate("payout", {"odds": odds, "stake": stake, "format": price_format}), as_json)


@calc_app.command("parlay", context_settings=VARIADIC)
def parlay(prices: Prices = None, _odds: OddsMarker = False, stake: Stake = "1", price_format: Format = "decimal",
           as_json: JsonFlag = False) -> None:
    """A parlay's price and payout; mark a leg PRICE:push, :void, :won or :lost: svc calc parlay --odds -110 +150 -200:push --stake 10 --format american"""
    legs = []
    for token in _prices(prices, "legs"):
        price, _, status = token.partition(":")
        legs.append({"odds": price, "status": status or "open"})
    _show(_calculate("parlay", {"legs": legs, "stake": stake, "format": price_format}), as_json)


@calc_app.command("ev", context_settings=VARIADIC)
def ev(odds: Odds, probability: Annotated[str, typer.Option("--probability", help="Your win probability, 0 to 1")],
       stake: Stake = "1", price_format: Format = "decimal", as_json: JsonFlag = False) -> None:
    """Expected value and edge: svc calc ev --odds 2.1 --probability 0.52 --stake 100"""
    body = {"odds": odds, "probability": probability, "stake": stake, "format": price_format}
    _show(_calculate("ev", body), as_json)


@calc_app.command("kelly", context_settings=VARIADIC)
def kelly(
    odds: Odds,
    probability: Annotated[str, typer.Option("--probability", help="Your win probability, 0 to 1")],
    fraction: Annotated[str, typer.Option("--fraction", help="Kelly multiplier, e.g. 0.5 for half Kelly")] = "1",
    cap: Annotated[str, typer.Option("--cap", help="Largest share of bankroll, e.g. 0.05")] = "1",
    bankroll: Annotated[Optional[str], typer.Option("--bankroll", help="Bankroll, to get the stake in money")] = None,
    price_format: Format = "decimal",
    as_json: JsonFlag = False,
) -> None:
    """Kelly stake: svc calc kelly --odds 2.1 --probability 0.52 --fraction 0.5 --cap 0.05 --bankroll 1000"""
    body = {"odds": odds, "probability": probability, "fraction": fraction, "cap": cap, "bankroll": bankroll,
            "format": price_format}
    _show(_calculate("kelly", body), as_json)


@calc_app.command("arbitrage", context_settings=VARIADIC)
def arbitrage(prices: Prices = None, _odds: OddsMarker = False, stake: Stake = "100", price_format: Format = "decimal",
              as_json: JsonFlag = False) -> None:
    """Sure-bet check and equal-payout stakes for the best price on each outcome: svc calc arbitrage --odds 2.12 1.95 --stake 100"""
    _show(_calculate("arbitrage", {"odds": _prices(prices), "stake": stake, "format": price_format}), as_json)


@calc_app.command("middle", context_settings=VARIADIC)
def middle(
    kind: Annotated[str, typer.Option("--kind", help="spread or total")],
    first: Annotated[tuple[str, str, str, str], typer.Option("--first", help="SIDE LINE ODDS STAKE (side: home/away or over/under)")],
    second: Annotated[tuple[str, str, str, str], typer.Option("--second", help="SIDE LINE ODDS STAKE, the opposite side")],
    price_format: Format = "decimal",
    as_json: JsonFlag = False,
) -> None:
    """Middle check: svc calc middle --kind total --first over 44.5 -110 110 --second under 47.5 -110 110 --format american"""
    positions = [dict(zip(("side", "line", "odds", "stake"), values)) for values in (first, second)]
    _show(_calculate("middle", {"kind": kind, "positions": positions, "format": price_format}), as_json)


@calc_app.command("clv", context_settings=VARIADIC)
def clv(
    taken: Annotated[str, typer.Option("--taken", help="The price you took, in --format")],
    closing_probability: Annotated[Optional[str], typer.Option("--closing-probability", help="No-vig closing probability of your side")] = None,
    closing_odds: Prices = None,
    _marker: Annotated[bool, typer.Option("--closing-odds", help="Marks the closing prices of every outcome (then --selection)")] = False,
    selection: Annotated[Optional[int], typer.Option("--selection", help="Your side's index in the closing prices, from 0")] = None,
    method: Method = "multiplicative",
    price_format: Format = "decimal",
    as_json: JsonFlag = False,
) -> None:
    """Closing-line value: svc calc clv --taken 2.1 --closing-odds 1.87 2.02 --selection 1 --method power"""
    body = {"taken_odds": taken, "closing_probability": closing_probability, "closing_odds": closing_odds or None,
            "selection": selection, "method": method, "format": price_format}
    _show(_calculate("clv", body), as_json)
