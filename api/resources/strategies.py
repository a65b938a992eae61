"""Strategies and recipes, from the registry's read models.

The stored record is the file as the log carries it (schemas/strategies.py); what is derived is
derived here, from the projection: `chains` (the recipes that run a strategy), a recipe's
`runs`, `execution_inputs`, `assumed_inputs` and `calls`, the evidence's `stale`, and the
list's `registry_version`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime, time, timezone
from typing import Annotated, Any, Literal

import msgspec

from api.conventions import RG_LINE
from api.resources.common import Meta, utc
from schemas.content import Source, digest
from schemas.strategies import FAMILIES, GRADES, RecipeEntry, StrategyEntry, chain_number

CHECK_TOOL = "check_strategy"  # the MCP tool that runs a check (calls.mcp)
EDITORIAL = "svc editorial"


def check_call(slug: str) -> str:
    return f"POST /v1/strategies/{slug}:check"


class Citation(msgspec.Struct, kw_only=True):
    title: str
    publisher: str
    url: str
    published_on: date | None
    accessed_on: date | None


class Evidence(msgspec.Struct, kw_only=True):
    grade: str
    grade_words: str
    grade_scale: Annotated[str, msgspec.Meta(description="What the grade letter means in general.")]
    through: Annotated[str, msgspec.Meta(description="The month (YYYY-MM) the evidence was read up to.")]
    reviewed_at: date
    review_due: date
    summary: str
    sources: Annotated[list[str], msgspec.Meta(description="Each source as one line: title, publisher, date, URL, when checked.")]
    citations: Annotated[list[Citation], msgspec.Meta(description="The same sources, field by field.")]
    stale: Annotated[bool, msgspec.Meta(description="The review is overdue (review_due is before today, UTC).")]


class FlipCondition(msgspec.Struct, kw_only=True):
    id: str
    evidence: str
    to: str | None


class Input(msgspec.Struct, kw_only=True):
    id: str
    execution_input: Annotated[bool, msgspec.Meta(description="Only the caller can give it; never assumed.")]
    what: str
    note: str | None
    default: Annotated[str | None, msgspec.Meta(description="What the check assumes when it is left out (never for an execution input).")]


class Precondition(msgspec.Struct, kw_only=True):
    id: str
    check: str
    figure: Annotated[str, msgspec.Meta(description="The figure (or input) the test is on.")]
    op: Literal[">", ">=", "<", "<=", "is_true", "is_false"]
    threshold: float | None
    card: str | None
    on_fail: Annotated[str, msgspec.Meta(description="The sentence a failed check fills in; {placeholders} name figures and inputs.")]


class ChainRef(msgspec.Struct, kw_only=True):
    id: str
    name: str
    runs: bool


class Alternative(msgspec.Struct, kw_only=True):
    """For a weak or myth strategy: the robust strategy to run instead."""

    id: Annotated[str, msgspec.Meta(description="Registry ID (slug) of the strategy to run instead.")]
    public_id: str
    name: str
    verdict: str
    why: str
    check: Annotated[str, msgspec.Meta(description="Its check call.")]


class Strategy(Meta, kw_only=True, tag_field="object", tag="strategy"):
    id: Annotated[str, msgspec.Meta(description="Registry ID: the strategy's slug.")]
    public_id: Annotated[str, msgspec.Meta(description="Stable `stg_` ID.")]
    name: str
    ledger_row: int | None
    family: str
    family_name: str
    verdict: Literal["robust", "conditional", "weak", "myth", "prohibited"]
    verdict_text: str
    route: Literal["execute", "check_then_execute", "warn_first", "decline", "refuse"]
    route_by_rule: str | None
    decisive_figure: str
    evidence: Evidence
    flip_conditions: list[FlipCondition]
    inputs: list[Input]
    preconditions: list[Precondition]
    chains: list[ChainRef]
    formulas: Annotated[list[str], msgspec.Meta(description="Formula card IDs (GET /v1/formulas/{card_id}).")]
    price_basis: Literal["user", "consensus", "none"]
    alternative: Alternative | None
    aliases: list[str]
    needs_jurisdiction: Annotated[bool, msgspec.Meta(description="Its check needs the caller's `jurisdiction`.")]
    check: Annotated[str, msgspec.Meta(description="The check call: method and path.")]
    version: Annotated[int, msgspec.Meta(description="Bumped when the verdict or its evidence changes.")]


class McpCall(msgspec.Struct, kw_only=True):
    tool: str
    arguments: dict[str, str]


class Calls(msgspec.Struct, kw_only=True):
    mcp: McpCall | None
    api: Annotated[str | None, msgspec.Meta(description="The check call: method and path (null for a chain with no strategies).")]


class Recipe(Meta, kw_only=True, tag_field="object", tag="recipe"):
    id: Annotated[str, msgspec.Meta(description="Chain ID: C1, C2, ...")]
    name: str
    summary: str
    runs: Annotated[bool, msgspec.Meta(description="The chain can be run by its check call (it has strategies, all in the registry).")]
    strategies: Annotated[list[str], msgspec.Meta(description="Registry IDs of the strategies it runs, in order.")]
    lead: str | None
    execution_inputs: list[str]
    assumed_inputs: list[str]
    calls: Calls
    version: int


class StrategyList(msgspec.Struct, kw_only=True, tag_field="object", tag="list"):
    data: list[Strategy]
    has_more: bool
    next_cursor: str | None
    registry_version: Annotated[str, msgspec.Meta(description="Moves whenever any strategy's or recipe's version, or the set of them, changes.")]
    as_of: Annotated[datetime, msgspec.Meta(description="Midnight UTC of the newest review in the registry.")]


class RecipeList(msgspec.Struct, kw_only=True, tag_field="object", tag="list"):
    data: list[Recipe]
    has_more: bool
    next_cursor: str | None
    registry_version: str
    as_of: datetime


_strategy = msgspec.json.Decoder(StrategyEntry)
_recipe = msgspec.json.Decoder(RecipeEntry)


def strategy_entry(row: Mapping[str, Any]) -> StrategyEntry:
    return _strategy.decode(row["record"])


def recipe_entry(row: Mapping[str, Any]) -> RecipeEntry:
    return _recipe.decode(row["record"])


def midnight(day: date) -> datetime:
    return datetime.combine(day, time(0), timezone.utc)


def today() -> date:
    return datetime.now(timezone.utc).date()


def cite(s: Source) -> str:
    when = f", {s.published_on.isoformat()}" if s.published_on else ""
    checked = f" (checked {s.accessed_on.isoformat()})" if s.accessed_on else ""
    return f"{s.title}. {s.publisher}{when}. {s.url}{checked}"


def _meta(as_of: datetime, source: str, request_id: str | None) -> dict[str, Any]:
    return dict(as_of=as_of, source=source, stale_after_ms=None, attribution=None, request_id=request_id,
                live_topics=[], rg_line=RG_LINE)


def strategy(row: Mapping[str, Any], e: StrategyEntry, chains: Sequence[ChainRef],
             alternatives: Mapping[str, tuple[str, StrategyEntry]], request_id: str | None, on: date) -> Strategy:
    """`alternatives`: slug -> (public ID, entry) of the strategies an alternative may name."""
    ev = e.evidence
    alternative = None
    if e.alternative is not None and e.alternative.strategy in alternatives:
        public_id, alt = alternatives[e.alternative.strategy]
        alternative = Alternative(id=alt.slug, public_id=public_id, name=alt.name, verdict=alt.verdict,
                                  why=e.alternative.why, check=check_call(alt.slug))
    return Strategy(
        **_meta(utc(row["as_of"]), e.source, request_id),  # type: ignore[arg-type]
        id=e.slug, public_id=row["id"], name=e.name, ledger_row=e.ledger_row, family=e.family,
        family_name=FAMILIES[e.family], verdict=e.verdict, verdict_text=e.verdict_text, route=e.route,
        route_by_rule=e.route_by_rule, decisive_figure=e.decisive_figure,
        evidence=Evidence(
            grade=ev.grade, grade_words=ev.grade_words, grade_scale=GRADES[ev.grade], through=ev.through,
            reviewed_at=ev.reviewed_at, review_due=ev.review_due, summary=ev.summary,
            sources=[cite(s) for s in ev.sources],
            citations=[Citation(title=s.title, publisher=s.publisher, url=s.url, published_on=s.published_on,
                                accessed_on=s.accessed_on) for s in ev.sources],
            stale=ev.review_due < on,
        ),
        flip_conditions=[FlipCondition(id=c.id, evidence=c.evidence, to=c.to) for c in e.flip_conditions],
        inputs=[Input(id=i.id, execution_input=i.execution_input, what=i.what, note=i.note, default=i.default)
                for i in e.inputs],
        preconditions=[Precondition(id=p.id, check=p.check, figure=p.figure, op=p.op, threshold=p.threshold,
                                    card=p.card, on_fail=p.on_fail) for p in e.preconditions],
        chains=list(chains), formulas=list(e.formulas), price_basis=e.price_basis, alternative=alternative,
        aliases=list(e.aliases), needs_jurisdiction=e.needs_jurisdiction, check=check_call(e.slug),
        version=row["version"],
    )


def lead_of(r: RecipeEntry) -> str | None:
    return r.lead or (r.strategies[-1] if r.strategies else None)


def runs(r: RecipeEntry, published: Mapping[str, StrategyEntry]) -> bool:
    return bool(r.strategies) and all(s in published for s in r.strategies)


def recipe(row: Mapping[str, Any], r: RecipeEntry, published: Mapping[str, StrategyEntry],
           request_id: str | None) -> Recipe:
    execution: dict[str, None] = {}
    assumed: dict[str, None] = {}
    for slug in r.strategies:
        for i in published[slug].inputs if slug in published else ():
            (execution if i.execution_input else assumed)[i.id] = None
    lead = lead_of(r)
    runnable = runs(r, published)
    calls = Calls(
        mcp=McpCall(tool=CHECK_TOOL, arguments={"strategy": lead, "chain": r.id}) if lead else None,
        api=check_call(lead) if lead else None,
    )
    return Recipe(
        **_meta(utc(row["as_of"]), r.source, request_id),  # type: ignore[arg-type]
        id=r.id, name=r.name, summary=r.summary, runs=runnable, strategies=list(r.strategies), lead=lead,
        execution_inputs=list(execution), assumed_inputs=[a for a in assumed if a not in execution], calls=calls,
        version=row["version"],
    )


def chains_of(recipes: Iterable[tuple[RecipeEntry, bool]]) -> dict[str, list[ChainRef]]:
    """slug -> the chains that run it, in chain order."""
    out: dict[str, list[ChainRef]] = {}
    for r, runnable in sorted(recipes, key=lambda x: chain_number(x[0].id)):
        for slug in r.strategies:
            out.setdefault(slug, []).append(ChainRef(id=r.id, name=r.name, runs=runnable))
    return out


def registry_version(versions: Iterable[tuple[str, int]], as_of: datetime) -> str:
    """The newest review day, then a digest of every published strategy's and recipe's version:
    it moves whenever one of them does, or one is published or retired."""
    return f"{as_of:%Y-%m-%d}.{digest(sorted(versions))[:12]}"
