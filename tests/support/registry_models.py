"""The shipped strategy registry as the projector writes it: the ingest's plan folded by the real
reducers into the real rows, inserted with the projector's own upserts (for API tests)."""

from __future__ import annotations

import asyncpg

from ingest import content
from ingest.strategies import RECIPES, STRATEGIES, read_registry, registry_root
from projections.pg_writer import upsert_sql
from projections.reducers.content import reduce_recipe, reduce_strategy
from projections.rows import RowSet, batch_rows
from tests.support.library_models import INGESTED

TABLES = ("strategies", "strategy_revisions", "recipes", "recipe_revisions")


def registry_rows() -> RowSet:
    strategies, recipes = read_registry(registry_root())
    states: dict = {}
    for files, kind, reduce in ((strategies, STRATEGIES, reduce_strategy), (recipes, RECIPES, reduce_recipe)):
        events, letters = content.plan(files, {}, INGESTED, kind)
        assert not letters, [(d.file, d.reason) for d in letters]
        for e in events:
            states[e.entry_id], _ = reduce(states.get(e.entry_id), e)
    return batch_rows(dict.fromkeys(states), states, {}, 0)


async def insert_registry(conn: asyncpg.Connection, schema: str, rows: RowSet | None = None) -> None:
    rows = rows or registry_rows()
    for table in TABLES:
        data = rows.rows[table]
        if data:
            await conn.execute(upsert_sql(schema, table), *(list(col) for col in zip(*data)))
