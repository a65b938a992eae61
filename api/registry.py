"""The published strategy registry as one value, read whole from the read models (it is small:
at most 134 strategies and 46 recipes), with what routes and the CLI derive from it: resources,
the registry version, and a strategy check with its alternative and chain."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg

from api.problems import ProblemError
from api.queries import strategies as registry_sql
from api.resources.strategies import (
    Alternative, ChainRef, Recipe, Strategy, chains_of, check_call, midnight, recipe, recipe_entry, registry_version,
    runs, strategy, strategy_entry, today,
)
from api.strategy_check import CheckRequest, RuleRef, StrategyCheck, jurisdictions_of, run_check
from schemas.strategies import RecipeEntry, StrategyEntry
from schemas.read_model_tables import ReferenceEntryRecord
from schemas.read_models import column_list

# what a strategy check cites of a law or policy entry
_RULE = column_list(ReferenceEntryRecord, only=("id", "slug", "kind", "title", "summary", "jurisdictions"))


def not_found(ref: str) -> ProblemError:
    return ProblemError("not_found", f"There is no strategy {ref[:100]!r} in the registry (GET /v1/strategies lists them).",
                        param="strategy_id")


@dataclass
class Registry:
    strategies: list[tuple[dict, StrategyEntry]]  # (row, entry) in ledger order
    recipes: list[tuple[dict, RecipeEntry]]  # in chain order

    @property
    def by_slug(self) -> dict[str, StrategyEntry]:
        return {e.slug: e for _, e in self.strategies}

    def find(self, ref: str) -> tuple[dict, StrategyEntry] | None:
        """A strategy by its slug or `stg_` ID."""
        return next(((r, e) for r, e in self.strategies if ref in (e.slug, r["id"])), None)

    def find_recipe(self, chain: str) -> tuple[dict, RecipeEntry] | None:
        return next(((r, e) for r, e in self.recipes if e.id == chain), None)

    def version(self) -> tuple[str, datetime]:
        """`registry_version`, and `as_of`: midnight UTC of the newest review."""
        rows = [r for r, _ in self.strategies] + [r for r, _ in self.recipes]
        newest = max((r["as_of"] for r in rows), default=None)
        as_of = midnight(newest.date() if newest is not None else today())
        return registry_version([(r["id"], r["version"]) for r in rows], as_of), as_of

    def alternatives(self) -> dict[str, tuple[str, StrategyEntry]]:
        return {e.slug: (r["id"], e) for r, e in self.strategies}

    def chains(self) -> dict[str, list[ChainRef]]:
        published = self.by_slug
        return chains_of((e, runs(e, published)) for _, e in self.recipes)

    def strategy(self, row: dict, e: StrategyEntry, request_id: str | None, chains=None, alternatives=None) -> Strategy:
        chains = self.chains() if chains is None else chains
        alternatives = self.alternatives() if alternatives is None else alternatives
        return strategy(row, e, chains.get(e.slug, []), alternatives, request_id, today())

    def recipe(self, row: dict, r: RecipeEntry, request_id: str | None) -> Recipe:
        return recipe(row, r, self.by_slug, request_id)

    def alternative_of(self, e: StrategyEntry) -> Alternative | None:
        found = self.find(e.alternative.strategy) if e.alternative is not None else None
        if found is None or e.alternative is None:
            return None
        row, alt = found
        return Alternative(id=alt.slug, public_id=row["id"], name=alt.name, verdict=alt.verdict, why=e.alternative.why,
                           check=check_call(alt.slug))

    def check(self, ref: str, data: CheckRequest, request_id: str | None, rules=None) -> StrategyCheck:
        row, e = self.get(ref)
        if data.chain is not None:
            chain = self.find_recipe(data.chain)
            if chain is None or e.slug not in chain[1].strategies:
                raise ProblemError("invalid_request", f"{data.chain} is not a recipe that runs {e.slug}.", param="chain")
        return run_check(e, row["id"], row["version"], data, self.alternative_of(e), request_id, rules=rules)

    def get(self, ref: str) -> tuple[dict, StrategyEntry]:
        found = self.find(ref)
        if found is None:
            raise not_found(ref)
        return found


async def rules_for(conn: asyncpg.Connection, schema: str, jurisdiction: str) -> list[RuleRef]:
    """The published law and policy entries of the reference library for a jurisdiction and its country."""
    rows = await conn.fetch(
        f"SELECT {_RULE} FROM {schema}.reference_entries "
        f"WHERE status = 'published' AND kind IN ('law', 'policy') AND jurisdictions && $1::text[] ORDER BY kind, title",
        jurisdictions_of(jurisdiction),
    )
    return [RuleRef(id=r["id"], slug=r["slug"], kind=r["kind"], title=r["title"], summary=r["summary"],
                    jurisdictions=list(r["jurisdictions"]), url=f"/v1/reference/{r['slug']}") for r in rows]


async def check_with_rules(conn: asyncpg.Connection, schema: str, reg: Registry, ref: str, data: CheckRequest,
                           request_id: str | None) -> StrategyCheck:
    """A check, with the jurisdiction's law entries for a strategy whose rule depends on where the caller is."""
    _, e = reg.get(ref)
    rules = None
    if e.needs_jurisdiction and data.jurisdiction is not None:
        rules = await rules_for(conn, schema, data.jurisdiction)
    return reg.check(ref, data, request_id, rules)


async def read_registry(conn: asyncpg.Connection, schema: str) -> Registry:
    strategy_rows = await registry_sql.strategies(conn, schema)
    recipe_rows = await registry_sql.recipes(conn, schema)
    return Registry(
        [(dict(r), strategy_entry(r)) for r in strategy_rows], [(dict(r), recipe_entry(r)) for r in recipe_rows],
    )
