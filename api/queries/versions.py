"""The version of a whole read-model table: its row count and newest row version (`xmin`, new
with every insert or update). An insert or update raises the newest version and a delete lowers
the count, so a value derived from the whole table (api.kept.Rechecked) is current while this
stays the same."""

from __future__ import annotations

import asyncpg


async def table_version(conn: asyncpg.Connection, schema: str, table: str) -> tuple[int, int]:
    row = await conn.fetchrow(f"SELECT count(*), coalesce(max(xmin::text::bigint), 0) FROM {schema}.{table}")
    return row[0], row[1]
