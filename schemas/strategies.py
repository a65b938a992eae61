"""The strategy registry's files: strategies and recipes (decision chains), their validation,
and the records the log carries.

A strategy is one TOML file, `strategies/<family>/<slug>.toml` under the registry root (the
family folder is its code, `B5` or `F3`); a recipe is `recipes/<id>.toml` (`C1` ... `C46`).
`load_strategy` and `load_recipe` turn a file's text into a record or raise `EntryError` with
the reason (the ingest dead-letters it with its path). Rules across files (ledger rows, the
strategies a recipe or an alternative names, formula cards, check programs) are checked by
`ingest/strategies.py`, which sees every file. Pure: no I/O.

A strategy's ID is its slug; `public_id` is `stg_` plus the hash of the slug. A recipe's ID is
its chain number. `version` moves when the verdict or the evidence changes (`version_hash`).
"""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from schemas.content import (
    EntryError, FormulaId, LongText, Source, Text, check_review, check_sources, check_unique, digest, load_toml,
)
from domain.ids import natural_id

# families B1 to B14 (betting) and F1 to F9 (fantasy); the names are ours
FAMILIES: dict[str, str] = {
    "B1": "Price and line shopping",
    "B2": "Closing line value",
    "B3": "Arbitrage",
    "B4": "Middles",
    "B5": "Staking and bankroll",
    "B6": "Progression systems",
    "B7": "Promotions and bonus conversion",
    "B8": "Parlays and teasers",
    "B9": "Market biases",
    "B10": "Model-based handicapping",
    "B11": "In-play betting",
    "B12": "Props and correlated legs",
    "B13": "Exchanges, hedging and cash-out",
    "B14": "Prohibited conduct",
    "F1": "Season-long drafting",
    "F2": "Waivers and FAAB",
    "F3": "Start/sit decisions",
    "F4": "DFS cash games",
    "F5": "DFS tournaments",
    "F6": "Best ball",
    "F7": "Pick'em and props contests",
    "F8": "Trades, keepers and dynasty",
    "F9": "Contest selection, bankroll and prohibited conduct",
}
FAMILY_PATTERN = r"^[BF][0-9]{1,2}$"  # the `family` filter's pattern (a family that exists or not)
VERDICTS = ("robust", "conditional", "weak", "myth", "prohibited")
ROUTES = ("execute", "check_then_execute", "warn_first", "decline", "refuse")
Verdict = Literal["robust", "conditional", "weak", "myth", "prohibited"]
Route = Literal["execute", "check_then_execute", "warn_first", "decline", "refuse"]
PriceBasis = Literal["user", "consensus", "none"]
Status = Literal["published", "draft", "retired"]
Op = Literal[">", ">=", "<", "<=", "is_true", "is_false"]
MAX_LEDGER_ROW = 134
MAX_CHAIN = 46

SLUG = r"^[a-z0-9][a-z0-9-]{0,79}$"
CHAIN = r"^C[1-9][0-9]?$"
INPUT_ID = r"^[a-z][a-z0-9_]{0,39}$"
PROGRAM = r"^[a-z][a-z0-9_]{0,39}$"
MONTH = r"^[0-9]{4}-(0[1-9]|1[0-2])$"
_SLUG = re.compile(SLUG)
_CHAIN = re.compile(CHAIN)
_PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")

Slug = Annotated[str, Meta(pattern=SLUG)]
ChainId = Annotated[str, Meta(pattern=CHAIN)]
InputId = Annotated[str, Meta(pattern=INPUT_ID)]
NumberText = Annotated[str, Meta(pattern=r"^-?[0-9]+(\.[0-9]+)?$", max_length=40)]

# evidence grades: how strong the evidence behind a verdict is
GRADES: dict[str, str] = {
    "A": "a mathematical result, or consistent findings across many independent studies",
    "B": "good empirical studies that mostly agree",
    "C": "mixed or limited evidence",
    "D": "little or no evidence beyond anecdote",
    "R": "set by law, a regulator or operator rules",
}
Grade = Literal["A", "B", "C", "D", "R"]


class Evidence(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    grade: Grade
    grade_words: Text  # the grade in words, for this strategy
    through: Annotated[str, Meta(pattern=MONTH)]  # the month the evidence was read up to
    reviewed_at: date
    review_due: date
    summary: LongText  # in our own words
    sources: Annotated[list[Source], Meta(min_length=1)]


class FlipCondition(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    id: InputId
    evidence: Text  # what would have to be shown
    to: Verdict | None  # the verdict it would flip to (None: withdrawn from the registry)


class Input(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    id: InputId
    execution_input: bool  # true: only the caller can give it, never assumed
    what: Text
    note: Text | None = None
    default: NumberText | None = None  # what is assumed when an input that is not an execution input is left out


class Precondition(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    id: InputId
    check: Text  # the test in words
    figure: InputId  # the figure (or input) tested
    op: Op
    threshold: float | None = None  # None for is_true / is_false
    card: FormulaId | None = None  # the formula card the figure comes from
    on_fail: Text  # a sentence with {placeholders}: figure and input IDs


class Alternative(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """For a weak or myth strategy: the robust one to run instead, and why."""

    strategy: Slug
    why: Text


class StrategyFile(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A strategy file, exactly (an unknown key is a mistake, not an extension)."""

    name: Text
    ledger_row: Annotated[int, Meta(ge=1, le=MAX_LEDGER_ROW)]
    verdict: Verdict
    verdict_text: LongText
    route: Route
    route_by_rule: Text | None = None
    decisive_figure: Text
    program: Annotated[str, Meta(pattern=PROGRAM)]  # the check it runs (domain/strategy_checks.py)
    needs_jurisdiction: bool = False  # its rule depends on where the caller is
    evidence: Evidence
    flip_conditions: Annotated[list[FlipCondition], Meta(min_length=1)]
    inputs: list[Input] = []
    preconditions: list[Precondition] = []
    formulas: list[FormulaId] = []
    price_basis: PriceBasis
    alternative: Alternative | None = None
    aliases: list[Text] = []
    source: Text  # who stands behind the text
    status: Status


class StrategyEntry(StrategyFile, frozen=True, kw_only=True):
    """A strategy as the log carries it: the file, and where it lives."""

    slug: str
    family: str


class RecipeFile(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    name: Text
    summary: LongText
    strategies: list[Slug] = []  # in the order they run
    lead: Slug | None = None  # the check the chain's call runs (default: its last strategy)
    reviewed_at: date
    review_due: date
    source: Text
    status: Status


class RecipeEntry(RecipeFile, frozen=True, kw_only=True):
    id: str


def strategy_id(slug: str) -> str:
    return natural_id("strategy", slug)


def family_order(family: str) -> tuple[int, int]:
    """Ledger order of families: B1 ... B14, then F1 ... F9."""
    return (0 if family[0] == "B" else 1, int(family[1:]))


def chain_number(chain: str) -> int:
    return int(chain[1:])


def _rules(e: StrategyFile) -> None:
    """What a verdict implies about the route and the alternative."""
    if (e.verdict == "prohibited") != (e.route == "refuse"):
        raise EntryError("a prohibited strategy is refused (route refuse), and only a prohibited one")
    if e.verdict == "myth" and e.route != "decline":
        raise EntryError("a myth is declined (route decline)")
    if e.verdict in ("robust", "conditional") and e.route == "decline":
        raise EntryError(f"a {e.verdict} strategy is not declined outright; use check_then_execute or warn_first")
    if e.verdict in ("weak", "myth") and e.alternative is None:
        raise EntryError(f"a {e.verdict} strategy names its alternative (the robust one to run instead)")
    if e.verdict in ("robust", "conditional", "prohibited") and e.alternative is not None:
        raise EntryError(f"a {e.verdict} strategy has no alternative")
    if e.verdict == "prohibited" and (e.inputs or e.preconditions):
        raise EntryError("a prohibited strategy takes no inputs and runs no preconditions")


def load_strategy(family: str, slug: str, text: str) -> StrategyEntry:
    """The strategy a file holds (`family`: its folder, `slug`: its name without `.toml`)."""
    if family not in FAMILIES:
        raise EntryError(f"folder {family!r} is not a family (B1 to B14, F1 to F9)")
    if not _SLUG.match(slug):
        raise EntryError(f"file name {slug!r} is not a slug (lower-case letters, digits and hyphens)")
    f = load_toml(text, StrategyFile, "file")
    check_review(f.evidence.reviewed_at, f.evidence.review_due)
    check_sources(f.evidence.sources, "evidence.sources")
    check_unique(aliases=f.aliases, formulas=f.formulas, inputs=[i.id for i in f.inputs],
                 preconditions=[p.id for p in f.preconditions], flip_conditions=[c.id for c in f.flip_conditions],
                 sources=[s.url for s in f.evidence.sources])
    _rules(f)
    for i in f.inputs:
        if i.execution_input and i.default is not None:
            raise EntryError(f"input {i.id!r} is an execution input: it is never assumed, so it has no default")
    for p in f.preconditions:
        if (p.op in ("is_true", "is_false")) != (p.threshold is None):
            raise EntryError(f"precondition {p.id!r}: a threshold goes with a comparison, none with is_true/is_false")
        if p.card is not None and p.card not in f.formulas:
            raise EntryError(f"precondition {p.id!r} cites card {p.card!r}, which formulas does not list")
    if f.alternative is not None and f.alternative.strategy == slug:
        raise EntryError("the alternative names the strategy itself")
    return StrategyEntry(**msgspec.structs.asdict(f), slug=slug, family=family)


def placeholders(sentence: str) -> list[str]:
    return _PLACEHOLDER.findall(sentence)


def load_recipe(chain: str, text: str) -> RecipeEntry:
    if not _CHAIN.match(chain) or not 1 <= chain_number(chain) <= MAX_CHAIN:
        raise EntryError(f"file name {chain!r} is not a chain ID (C1 to C{MAX_CHAIN})")
    f = load_toml(text, RecipeFile, "file")
    check_review(f.reviewed_at, f.review_due)
    check_unique(strategies=f.strategies)
    if f.lead is not None and f.lead not in f.strategies:
        raise EntryError(f"lead {f.lead!r} is not one of the chain's strategies")
    return RecipeEntry(**msgspec.structs.asdict(f), id=chain)


def version_hash(entry: StrategyEntry) -> str:
    """What `version` follows: the verdict and its evidence. The review dates are left
    out: a re-review that changes nothing else keeps the version."""
    ev = msgspec.structs.replace(entry.evidence, reviewed_at=date(1970, 1, 1), review_due=date(1970, 1, 1))
    return digest([entry.verdict, entry.verdict_text, ev])


def recipe_version_hash(entry: RecipeEntry) -> str:
    """A recipe's version follows what it runs and says (not its review dates or status)."""
    return digest([entry.name, entry.summary, entry.strategies, entry.lead])


def file_hash(entry: StrategyEntry | RecipeEntry) -> str:
    """Everything the file says: a new revision when this moves."""
    return digest(entry)
