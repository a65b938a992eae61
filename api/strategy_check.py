"""Runs a strategy check (`POST /v1/strategies/{id}:check`) on the caller's numbers: the route
the strategy takes, each precondition with its value, threshold and result, the figures with
the formula card each comes from, the filled `on_fail` sentences and the alternative.

No web framework here (the CLI runs the same code). The maths is the check program's
(domain/strategy_checks.py), itself the calculations' own functions. Problems, in order:

- a prohibited strategy is refused (200, `route_taken` refuse), or 422 `not_stake_eligible` if
  asked to size a stake; a myth likewise is declined, or `not_stake_eligible`;
- a strategy whose rule depends on where the caller is needs `jurisdiction` (`needs_jurisdiction`);
- an input the strategy does not take, or one the maths cannot use: `invalid_inputs` naming it;
- an execution input left out: `missing_execution_input` naming it (never assumed). A declined
  strategy computes its figures only when every input it needs is there.
"""

from __future__ import annotations

from datetime import datetime, timezone
from fractions import Fraction
from typing import Annotated, Any, Literal

import msgspec

from calc.models import PriceFormat
from api.conventions import RG_LINE
from api.problems import ProblemError
from api.resources.strategies import Alternative
from domain import formula_cards as cards
from domain.strategy_checks import Value, read_input, run
from domain.exact import InvalidInput, exact, round_half_even, to_float
from schemas.library import JURISDICTION
from schemas.strategies import CHAIN, StrategyEntry
from domain.strategy_programs import PROGRAMS, ProgramSpec

SOURCE = "svc odds maths"
PLACES = 12
InputText = Annotated[str, msgspec.Meta(max_length=64)]
InputValue = float | InputText | Annotated[list[float | InputText], msgspec.Meta(max_length=100)]


class CheckRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    inputs: Annotated[
        dict[Annotated[str, msgspec.Meta(max_length=40)], InputValue],
        msgspec.Meta(description="Each input by its `inputs[].id`: a JSON number or a string holding one "
                                 "(as in the calculations API), a list of them, or a choice such as a method."),
    ] = {}
    format: PriceFormat = "decimal"
    size_stake: Annotated[bool, msgspec.Meta(description="Ask for a stake: refused (`not_stake_eligible`) for a "
                                                         "myth or prohibited strategy, or one that sizes none.")] = False
    jurisdiction: Annotated[str, msgspec.Meta(pattern=JURISDICTION, description="Where you are: ISO 3166 code "
                                              "(US-NJ, GB); needed by strategies whose rules depend on it.")] | None = None
    chain: Annotated[str, msgspec.Meta(pattern=CHAIN, description="The recipe this check runs in (C1 ...).")] | None = None


class Figure(msgspec.Struct, kw_only=True):
    id: str
    value: float | bool | int | list[float] | None
    formula: Annotated[str | None, msgspec.Meta(description="The formula card it comes from, `card@version`; null for plain arithmetic (see `what`).")]
    what: str


class PreconditionResult(msgspec.Struct, kw_only=True):
    id: str
    check: str
    figure: str
    op: str
    value: float | bool | int | None
    threshold: float | None
    passed: Annotated[bool | None, msgspec.Meta(description="null: not evaluated (an optional input it needs was not sent).")]
    card: str | None
    on_fail: Annotated[str | None, msgspec.Meta(description="The filled sentence when it failed.")]


class RuleRef(msgspec.Struct, kw_only=True):
    """A reference library entry (law or policy) for the caller's jurisdiction: information, not legal advice."""

    id: str
    slug: str
    kind: str
    title: str
    summary: str
    jurisdictions: list[str]
    url: str


class Stake(msgspec.Struct, kw_only=True):
    share: float
    amount: float | None


class StrategyCheck(msgspec.Struct, kw_only=True, tag_field="object", tag="strategy_check"):
    strategy: str
    public_id: str
    name: str
    verdict: str
    version: int
    route: str
    route_taken: Annotated[Literal["execute", "warn_first", "decline", "refuse"],
                           msgspec.Meta(description="What the check decided: execute (every precondition "
                                                    "passed), warn_first (go only knowing the warnings), "
                                                    "decline, or refuse.")]
    message: str
    preconditions: list[PreconditionResult]
    figures: list[Figure]
    formulas: Annotated[list[str], msgspec.Meta(description="Every formula card the figures came from, `card@version`.")]
    on_fail: list[str]
    alternative: Alternative | None
    stake: Stake | None
    inputs: Annotated[dict[str, Any], msgspec.Meta(description="Every input the check used, as given or assumed.")]
    assumed: Annotated[list[str], msgspec.Meta(description="Inputs left out and assumed (never an execution input).")]
    format: str
    jurisdiction: str | None
    rules: Annotated[list[RuleRef], msgspec.Meta(description="For a strategy whose rule depends on where you are: the reference library's law and policy entries for your jurisdiction (and its country).")] = []
    chain: str | None
    as_of: datetime
    source: str
    request_id: str | None
    rg_line: str


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Fraction):
        text = format(round_half_even(value, 4).normalize(), "f")
        return text
    if isinstance(value, tuple):
        return ", ".join(_show(v) for v in value)
    return str(value)


def _out(value: Value) -> Any:
    if isinstance(value, Fraction):
        return to_float(value, PLACES)
    if isinstance(value, tuple):
        return [_out(v) for v in value]
    return value


def _fill(sentence: str, names: dict[str, Any]) -> str:
    class Shown(dict):
        def __missing__(self, key: str) -> str:
            return "{" + key + "}"

    return sentence.format_map(Shown({k: _show(v) for k, v in names.items() if v is not None}))


def _compare(value: Any, op: str, threshold: float | None) -> bool:
    if op == "is_true":
        return value is True
    if op == "is_false":
        return value is False
    x, t = exact(value) if not isinstance(value, Fraction) else value, exact(repr(threshold))
    return {">": x > t, ">=": x >= t, "<": x < t, "<=": x <= t}[op]


def _card_of(card: str | None, method: str | None) -> str | None:
    """A devig figure comes from the card of the method used."""
    if card is not None and card.startswith("devig.") and method is not None:
        return f"devig.{method}"
    return card


def _inputs(e: StrategyEntry, program: ProgramSpec, req: CheckRequest, strict: bool) -> tuple[dict[str, Any], list[str]] | None:
    """The program's inputs read from the request (or assumed); None when `strict` is off and
    a required one is missing (a declined strategy then shows no figures)."""
    described = {i.id: i for i in e.inputs}
    for name in req.inputs:
        if name not in described:
            raise ProblemError("invalid_inputs", f"{e.slug} takes no input {name!r}; it takes "
                               f"{', '.join(described) or 'none'}.", param=name)
    values: dict[str, Any] = {}
    assumed: list[str] = []
    for spec in program.inputs:
        about = described[spec.id]
        raw = req.inputs.get(spec.id)
        if raw is None and about.default is not None:
            raw = about.default
            assumed.append(spec.id)
        if raw is None:
            if spec.required:
                if not strict:
                    return None
                raise ProblemError("missing_execution_input",
                                   f"{e.slug} needs '{spec.id}' ({about.what}); it is never assumed.", param=spec.id)
            continue
        try:
            values[spec.id] = read_input(spec, raw, req.format)
        except InvalidInput as exc:
            raise ProblemError("invalid_inputs", f"Invalid value for '{exc.field}': {exc.message}", param=exc.field) from None
    return values, assumed


def jurisdictions_of(jurisdiction: str) -> list[str]:
    """The jurisdiction and the country it is part of: US-NJ -> [US-NJ, US]."""
    code = jurisdiction.upper()
    return [code, code.split("-")[0]] if "-" in code else [code]


def run_check(e: StrategyEntry, public_id: str, version: int, req: CheckRequest, alternative: Alternative | None,
              request_id: str | None = None, as_of: datetime | None = None,
              rules: list[RuleRef] | None = None) -> StrategyCheck:
    program = PROGRAMS[e.program]
    base = dict(strategy=e.slug, public_id=public_id, name=e.name, verdict=e.verdict, version=version, route=e.route,
                format=req.format, jurisdiction=req.jurisdiction.upper() if req.jurisdiction else None, chain=req.chain,
                as_of=as_of or datetime.now(timezone.utc), source=SOURCE, request_id=request_id, rg_line=RG_LINE)
    if req.size_stake and e.verdict in ("myth", "prohibited"):
        raise ProblemError("not_stake_eligible", f"{e.name} is a {e.verdict}: it is never sized."
                           + (f" Run {alternative.id} instead." if alternative else ""), param="size_stake")
    if e.route == "refuse":
        return StrategyCheck(**base, route_taken="refuse", message=e.route_by_rule or e.verdict_text, preconditions=[],
                             figures=[], formulas=[], on_fail=[], alternative=None, stake=None, inputs={}, assumed=[])
    if e.needs_jurisdiction and req.jurisdiction is None:
        raise ProblemError("needs_jurisdiction", f"Whether {e.name} may be run depends on where you are: send "
                           "'jurisdiction' (ISO 3166, e.g. US-NJ).", param="jurisdiction")
    if req.size_stake and not program.sizes_stake:
        raise ProblemError("not_stake_eligible", f"{e.name} does not size stakes; a staking strategy such as "
                           "fractional-kelly does.", param="size_stake")
    declined = e.route == "decline"
    read = _inputs(e, program, req, strict=not declined)
    values, assumed = read if read is not None else ({}, [])
    try:
        figures = run(program.name, values) if read is not None else {}
    except InvalidInput as exc:
        raise ProblemError("invalid_inputs", f"Invalid value for '{exc.field}': {exc.message}", param=exc.field) from None
    method = values.get("method", "multiplicative") if any(s.id == "method" for s in program.inputs) else None
    names: dict[str, Any] = {**values, **figures}
    results: list[PreconditionResult] = []
    failed: list[str] = []
    unchecked = False
    for p in e.preconditions:
        value = names.get(p.figure)
        passed = None if value is None else _compare(value, p.op, p.threshold)
        sentence = _fill(p.on_fail, names) if passed is False else None
        if sentence:
            failed.append(sentence)
        unchecked = unchecked or passed is None
        card = _card_of(p.card, method)
        results.append(PreconditionResult(
            id=p.id, check=p.check, figure=p.figure, op=p.op, value=_out(value), threshold=p.threshold,
            passed=passed, card=cards.ref(card) if card else None, on_fail=sentence,
        ))
    shown: list[Figure] = []
    used: dict[str, None] = {}
    for spec in program.figures:
        if spec.id not in figures:
            continue
        card = _card_of(spec.card, method)
        ref = cards.ref(card) if card else None
        if ref:
            used[ref] = None
        shown.append(Figure(id=spec.id, value=_out(figures[spec.id]), formula=ref, what=spec.what))
    if declined:
        taken, message = "decline", e.verdict_text
    elif failed and e.route == "warn_first":
        taken, message = "warn_first", "Warnings: " + " ".join(failed)
    elif failed or (unchecked and e.route == "check_then_execute"):
        taken = "decline"
        message = " ".join(failed) if failed else "A precondition could not be checked without an optional input."
    else:
        taken, message = "execute", "Every precondition passed."
    stake = None
    if program.sizes_stake and not declined:
        share = figures.get("stake_fraction", figures.get("unit", Fraction(0)))
        amount = figures.get("stake")
        if taken == "decline":
            share, amount = Fraction(0), None if amount is None else Fraction(0)
        stake = Stake(share=_out(share), amount=_out(amount))
    echoed = {k: _out(v) if not isinstance(v, str) else v for k, v in values.items()}
    if e.needs_jurisdiction:
        found = rules or []
        where = base["jurisdiction"]
        message += (f" The reference library holds {len(found)} law or policy entries for {where} (information, not legal advice)."
                    if found else f" The reference library holds no law or policy entry for {where} yet: check with the regulator there.")
    return StrategyCheck(
        **base, rules=list(rules or []), route_taken=taken, message=message, preconditions=results, figures=shown,
        formulas=list(used),
        on_fail=failed, alternative=alternative if e.verdict in ("weak", "myth") or taken == "decline" else None,
        stake=stake, inputs=echoed, assumed=assumed,
    )


def check_example() -> dict:
    """The documented answer: the shipped Kelly strategy at 55% and evens (a fixed time and request)."""
    from importlib.resources import files

    from schemas.strategies import load_strategy, strategy_id

    text = files("content").joinpath("strategies/B5/kelly-criterion.toml").read_text(encoding="utf-8")
    entry = load_strategy("B5", "kelly-criterion", text)
    request = CheckRequest(inputs={"probability": "0.55", "price": "2.0", "bankroll": "1000"})
    result = run_check(entry, strategy_id("kelly-criterion"), 1, request, None, "req_0123456789abcdefghjk",
                       datetime(2026, 11, 26, tzinfo=timezone.utc))
    return msgspec.to_builtins(result)
