"""The migrated tables have the columns their record models say (schemas/read_models.py), with
the same Postgres types and nullability: a field added to a model without its migration, or a
migration without its field, fails here rather than in the writer's statement."""

from __future__ import annotations

import asyncpg
import msgspec

from schemas.datasets import DATASETS
from schemas.read_models import GameRecord, MarketLineRecord, MarketRecord, StatLineRecord, columns

# information_schema's names for the types `schemas.read_models.columns` gives
_SQL_NAMES = {
    "text": "text", "numeric": "numeric", "boolean": "boolean", "int": "integer", "bigint": "bigint",
    "float8": "double precision", "jsonb": "jsonb", "timestamptz": "timestamp with time zone", "date": "date",
    "bytea": "bytea",
}


def _nullable(model, name: str) -> bool:
    field = next(f for f in msgspec.structs.fields(model) if f.name == name)
    return "None" in repr(field.type)


async def test_each_table_has_its_record_columns(database_url):
    conn = await asyncpg.connect(database_url)
    try:
        for schema in DATASETS:
            for name, model in (("markets", MarketRecord), ("market_lines", MarketLineRecord), ("games", GameRecord),
                                ("stat_lines", StatLineRecord)):
                rows = await conn.fetch(
                    "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
                    "WHERE table_schema = $1 AND table_name = $2", schema, name,
                )
                table = {r["column_name"]: r["data_type"] for r in rows}
                assert table == {column: _SQL_NAMES[pgtype] for column, pgtype in columns(model)}, (schema, name)
                not_null = {r["column_name"] for r in rows if r["is_nullable"] == "NO"}
                # a column Postgres requires is never null in the model
                assert {c for c in not_null if _nullable(model, c)} == set(), (schema, name)
    finally:
        await conn.close()
