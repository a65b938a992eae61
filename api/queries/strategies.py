"""The published strategy registry: strategies in ledger order, recipes in chain order. The
registry is small (at most 134 strategies and 46 recipes): routes read it whole and filter it."""

from __future__ import annotations

import asyncpg

from schemas.read_model_tables import RecipeRecord, StrategyRecord
from schemas.read_models import column_list

# what the routes read: identity, version and the stored entry as JSON text (decoded into its
# struct by the route, schemas.strategies)
_STRATEGY = column_list(StrategyRecord, computed={"record": "record::text"}, only=("id", "slug", "version", "as_of", "record"))
_RECIPE = column_list(RecipeRecord, computed={"record": "record::text"}, only=("id", "version", "as_of", "record"))


async def strategies(conn: asyncpg.Connection, schema: str) -> list[asyncpg.Record]:
    return await conn.fetch(
        f"SELECT {_STRATEGY} FROM {schema}.strategies "
        f"WHERE status = 'published' ORDER BY ledger_row, slug"
    )


async def recipes(conn: asyncpg.Connection, schema: str) -> list[asyncpg.Record]:
    return await conn.fetch(
        f"SELECT {_RECIPE} FROM {schema}.recipes "
        f"WHERE status = 'published' ORDER BY number"
    )
