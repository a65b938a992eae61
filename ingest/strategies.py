"""`svc ingest strategies DIR`: the strategy registry's files into `strategy.*` and `recipe.*`
events on `feed.reference`.

The registry root holds `strategies/<family>/<slug>.toml` and `recipes/<chain>.toml`
(schemas/strategies.py says the formats). What a run appends, and when a file is dead-lettered
instead, is the same as for the reference library (ingest/content.py). Here: where the files
are, and the rules that need every file:

- a slug names one strategy; ledger rows are unique and follow ledger order (family, then row);
- a strategy's program exists, its inputs are exactly the program's (so the record documents
  everything the check takes), a required input is an execution input or has a default, and its
  preconditions test figures or inputs of that program with placeholders that exist;
- every formula card it names exists (`/v1/formulas`);
- the alternative of a weak or myth strategy is a robust strategy of the registry;
- a recipe runs strategies of the registry.
"""

from __future__ import annotations

import time
from datetime import datetime, time as day_start, timezone
from pathlib import Path

from ingest import content
from ingest.content import ContentFile, ContentKind
from ingest.event_log import EventLog
from ingest.summary import Summary
from infra.settings import Settings
from domain import formula_cards as cards
from domain.strategy_programs import PROGRAMS
from schemas.content import EntryError
from schemas.events import (
    RecipePublished, RecipeRetired, RecipeRevised, StrategyPublished, StrategyRetired, StrategyRevised,
)
from schemas.strategies import (
    StrategyEntry, family_order, file_hash, load_recipe, load_strategy, placeholders, strategy_id,
)

SOURCE = "strategies"  # the adapter name dead letters carry


def _midnight(day) -> datetime:
    return datetime.combine(day, day_start(0), timezone.utc)


STRATEGIES = ContentKind(
    source=SOURCE, id_of=strategy_id, published=StrategyPublished, revised=StrategyRevised, retired=StrategyRetired,
    file_hash=file_hash, as_of=lambda e: _midnight(e.evidence.reviewed_at),
)
RECIPES = ContentKind(
    source=SOURCE, id_of=lambda chain: chain, published=RecipePublished, revised=RecipeRevised, retired=RecipeRetired,
    file_hash=file_hash, as_of=lambda e: _midnight(e.reviewed_at),
)


def registry_root() -> Path:
    """The registry shipped with the service: `content/` (holding `strategies/` and `recipes/`)."""
    import content as shipped

    return Path(shipped.__file__).resolve().parent


def parse_strategy(rel: str, raw: str) -> ContentFile:
    rel = f"strategies/{rel}"
    parts = rel.split("/")
    if len(parts) != 3:
        return ContentFile(rel, raw, error="a strategy lives in a family folder, as strategies/<family>/<slug>.toml")
    try:
        return ContentFile(rel, raw, entry=load_strategy(parts[1], parts[2].removesuffix(".toml"), raw))
    except EntryError as exc:
        return ContentFile(rel, raw, error=str(exc))


def parse_recipe(rel: str, raw: str) -> ContentFile:
    rel = f"recipes/{rel}"
    parts = rel.split("/")
    if len(parts) != 2:
        return ContentFile(rel, raw, error="a recipe lives in the recipes folder, as recipes/<chain>.toml")
    try:
        return ContentFile(rel, raw, entry=load_recipe(parts[1].removesuffix(".toml"), raw))
    except EntryError as exc:
        return ContentFile(rel, raw, error=str(exc))


def program_problem(e: StrategyEntry) -> str | None:
    """Why the strategy's inputs or preconditions do not fit its program, or None."""
    program = PROGRAMS.get(e.program)
    if program is None:
        return f"program {e.program!r} does not exist ({', '.join(PROGRAMS)})"
    described = {i.id: i for i in e.inputs}
    taken = {i.id for i in program.inputs}
    if set(described) != taken:
        extra, missing = sorted(set(described) - taken), sorted(taken - set(described))
        return (f"inputs must describe exactly what program {e.program!r} takes"
                + (f"; it does not take {', '.join(extra)}" if extra else "")
                + (f"; undescribed: {', '.join(missing)}" if missing else ""))
    for spec in program.inputs:
        i = described[spec.id]
        if spec.required and not i.execution_input and i.default is None:
            return f"input {i.id!r} is required: make it an execution input or give it a default"
    names = taken | {f.id for f in program.figures}
    for p in e.preconditions:
        if p.figure not in names:
            return f"precondition {p.id!r} tests {p.figure!r}, which program {e.program!r} neither takes nor computes"
        unknown = [n for n in placeholders(p.on_fail) if n not in names]
        if unknown:
            return f"precondition {p.id!r}: on_fail names {', '.join(unknown)}, not an input or figure"
    return None


def check_registry(strategies: list[ContentFile], recipes: list[ContentFile]) -> tuple[list, list]:
    """The rules across files; a file that breaks one is refused with the reason."""
    out = content.unique_slugs(strategies)
    checked: list[ContentFile] = []
    for f in out:
        if f.entry is not None:
            problem = program_problem(f.entry)
            missing = [c for c in f.entry.formulas if cards.get(c) is None]
            missing += [p.card for p in f.entry.preconditions if p.card is not None and cards.get(p.card) is None]
            if missing:
                problem = f"formulas names cards that do not exist: {', '.join(sorted(set(missing)))}"
            if problem:
                f = f.refused(problem)
        checked.append(f)
    checked = _ledger_order(checked)
    verdicts = {f.slug: f.entry.verdict for f in checked if f.entry is not None}
    final = []
    for f in checked:
        alt = f.entry.alternative if f.entry is not None else None
        if alt is not None and verdicts.get(alt.strategy) != "robust":
            f = f.refused(f"alternative names {alt.strategy!r}, which is not a robust strategy of the registry")
        final.append(f)
    # a strategy whose file is refused this time keeps its last good version in the registry,
    # so a recipe naming it still resolves; only a strategy with no file is unknown
    slugs = {f.slug for f in final}
    chains = []
    for f in content.unique_slugs(recipes):
        if f.entry is not None:
            unknown = [s for s in f.entry.strategies if s not in slugs]
            if unknown:
                f = f.refused(f"strategies names no strategy of the registry: {', '.join(unknown)}")
        chains.append(f)
    return final, chains


def _ledger_order(files: list[ContentFile]) -> list[ContentFile]:
    """Rows unique, and in ledger order: sorted by family then row, the rows must rise."""
    valid = sorted((f for f in files if f.entry is not None),
                   key=lambda f: (family_order(f.entry.family), f.entry.ledger_row, f.path))
    refused: dict[str, str] = {}
    last: ContentFile | None = None
    for f in valid:
        if last is not None and f.entry.ledger_row <= last.entry.ledger_row:
            refused[f.path] = (f"ledger_row {f.entry.ledger_row} is not after {last.entry.family} row "
                               f"{last.entry.ledger_row} ({last.path}): rows are numbered in ledger order, family then row")
        else:
            last = f
    return [f.refused(refused[f.path]) if f.path in refused else f for f in files]


def read_registry(root: Path) -> tuple[list[ContentFile], list[ContentFile]]:
    strategies = content.read_files(root / "strategies", "*.toml", parse_strategy)
    recipes = content.read_files(root / "recipes", "*.toml", parse_recipe)
    return check_registry(strategies, recipes)


async def ingest_registry(root: Path, log: EventLog, settings: Settings) -> Summary:
    started = time.perf_counter()
    strategies, recipes = read_registry(root)
    return await content.append_content([(STRATEGIES, strategies), (RECIPES, recipes)], log, settings, started)


