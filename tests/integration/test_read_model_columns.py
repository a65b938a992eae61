"""The migrated tables have the columns their record models say (schemas/read_models.py and
schemas/read_model_tables.py), with the same Postgres types and nullability: a field added to a
model without its migration, or a migration without its field, fails here rather than in the
writer's statement."""

from __future__ import annotations

import asyncpg
import msgspec

from schemas.datasets import DATASETS
from schemas.read_models import GameRecord, MarketLineRecord, MarketRecord, StatLineRecord, columns

# information_schema's names for the types `schemas.read_models.columns` gives
_SQL_NAMES = {
    "text": "text", "numeric": "numeric", "boolean": "boolean", "int": "integer", "bigint": "bigint",
    "float8": "double precision", "jsonb": "jsonb", "timestamptz": "timestamp with time zone", "date": "date",
    "bytea": "bytea", "text[]": "ARRAY",
}


def _nullable(model, name: str) -> bool:
    field = next(f for f in msgspec.structs.fields(model) if f.name == name)
    return "None" in repr(field.type)


def _models() -> dict[str, type]:
    """Every read-model table the writer writes, by its record model (projections.rows.TABLES
    derives each table's columns from it; tests/unit/test_read_models.py checks that; seasons
    are computed in SQL by the writer's own statement, which names the model's columns)."""
    from schemas import read_model_tables as t

    return {
        "markets": MarketRecord, "market_lines": MarketLineRecord, "games": GameRecord, "stat_lines": StatLineRecord,
        "teams": t.TeamRecord, "players": t.PlayerRecord, "injuries": t.InjuryRecord,
        "availability": t.AvailabilityRecord, "news": t.NewsRecord, "book_prices": t.BookPriceRecord,
        "search_index": t.SearchRecord, "sports": t.SportRecord, "competitions": t.CompetitionRecord,
        "seasons": t.SeasonRecord,
        "reference_entries": t.ReferenceEntryRecord, "reference_revisions": t.RevisionRecord,
        "strategies": t.StrategyRecord, "strategy_revisions": t.RevisionRecord, "recipes": t.RecipeRecord,
        "recipe_revisions": t.RevisionRecord,
    }


# the projector's own bookkeeping, not read models: no reader serves them as records
_BOOKKEEPING = {"tracking", "outbox", "projection_meta", "projector_state", "topic_seq"}


async def test_each_table_has_its_record_columns(database_url):
    conn = await asyncpg.connect(database_url)
    try:
        for schema in DATASETS:
            # every read-model table has its model (seasons had none: its writer and reader
            # named the columns by hand)
            tables = {r["table_name"] for r in await conn.fetch(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'",
                schema)}
            assert tables - _BOOKKEEPING == set(_models()), schema
            for name, model in _models().items():
                # a generated column (reference_entries.document, the full-text document) is
                # Postgres's own: nobody writes it
                rows = await conn.fetch(
                    "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
                    "WHERE table_schema = $1 AND table_name = $2 AND is_generated = 'NEVER'", schema, name,
                )
                table = {r["column_name"]: r["data_type"] for r in rows}
                assert table == {column: _SQL_NAMES[pgtype] for column, pgtype in columns(model)}, (schema, name)
                not_null = {r["column_name"] for r in rows if r["is_nullable"] == "NO"}
                # a column Postgres requires is never null in the model
                assert {c for c in not_null if _nullable(model, c)} == set(), (schema, name)
    finally:
        await conn.close()


async def test_the_overround_migration_fills_the_lines_written_before_it_as_the_writer_would(database_url):
    """0140 adds `market_lines.overround` to a table that already has rows: every served line gets
    exactly the figure the projector writes (so a verify finds the rebuild equal), an unserved
    line stays null, and applying it again changes nothing."""
    from infra.migrate import _files
    from projections.reducers import reduce
    from projections.rows import TABLES, market_line_record
    from schemas.read_models import row_values
    from tests.support import projection_events as ev

    window = 3600 * 1_000_000
    gid = ev.game().game_id
    state = None
    quotes = [("a", [-110, -110], "-3"), ("b", [-105, -115], "-3"), ("c", [-120, 100], "-3"), ("a", [-150, 125], "-7")]
    for minute, (book, prices, point) in enumerate(quotes, 1):
        state, _ = reduce(state, ev.quote(gid, book, prices, market_type="spreads", point=point, minute=minute), window)
    (m,) = state.markets.values()
    made = {key: market_line_record(m, key, line, window) for key, line in m.lines.items()}
    assert made["-3"].overround is not None and made["-7"].overround is None  # one book: not served

    files = _files("dataset")
    (migration,) = [f for f in files if f.name == "0140_market_line_overround.sql"]
    cols = [name for name, _ in TABLES["market_lines"][0]]
    conn = await asyncpg.connect(database_url)
    try:
        async with conn.transaction():
            await conn.execute('CREATE SCHEMA before_overround; SET LOCAL search_path = before_overround, public')
            for path in files[: files.index(migration)]:
                await conn.execute(path.read_text())
            kept = [c for c in cols if c != "overround"]
            for record in made.values():
                values = dict(zip(cols, row_values(record)))
                await conn.execute(
                    f"INSERT INTO market_lines ({', '.join(kept)}) VALUES "
                    f"({', '.join(f'${i}' + ('::jsonb' if c in ('outcomes', 'methods', 'provenance') else '') for i, c in enumerate(kept, 1))})",
                    *(values[c] for c in kept),
                )
            for _ in range(2):  # once, and once more: nothing changes the second time
                await conn.execute(migration.read_text())
                stored = {r["line_key"]: r["overround"] for r in await conn.fetch("SELECT line_key, overround FROM market_lines")}
                assert stored == {key: record.overround for key, record in made.items()}
    finally:
        await conn.close()
