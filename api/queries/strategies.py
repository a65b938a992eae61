"""The published strategy registry: strategies in ledger order, recipes in chain order. The
registry is small (at most 134 strategies and 46 recipes): routes read it whole and filter it."""

from __future__ import annotations

import asyncpg


async def strategies(conn: asyncpg.Connection, schema: str) -> list[asyncpg.Record]:
    return await conn.fetch(
        f"SELECT id, slug, version, as_of, record::text AS record FROM {schema}.strategies "
        f"WHERE status = 'published' ORDER BY ledger_row, slug"
    )


async def recipes(conn: asyncpg.Connection, schema: str) -> list[asyncpg.Record]:
    return await conn.fetch(
        f"SELECT id, version, as_of, record::text AS record FROM {schema}.recipes "
        f"WHERE status = 'published' ORDER BY number"
    )
