"""Migrations: plain SQL files applied in name order, recorded in `schema_migrations`.

`global/` files run once per database; `dataset/` files run once per dataset schema with
`search_path` set to it (and to scratch schemas when projections are rebuilt).
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

import asyncpg

from schemas.datasets import DATASETS, pg_schema

MIGRATIONS = Path(__file__).parent / "migrations"
GLOBAL_SCOPE = "global"
_LOCK_KEY = 0x5F5C_0001  # pg advisory lock: one migrator at a time


@cache  # the files ship with the code: /health asks on every call
def _files(kind: str) -> tuple[Path, ...]:
    return tuple(sorted((MIGRATIONS / kind).glob("*.sql")))


def _checksum(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def _ensure_table(conn: asyncpg.Connection) -> None:
    await conn.execute(
        """
        CREATE TABLE IF NOT EXISTS public.schema_migrations (
            name        text NOT NULL,
            scope       text NOT NULL,
            checksum    text NOT NULL,
            applied_at  timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (name, scope)
        )
        """
    )


async def apply_dataset_ddl(conn: asyncpg.Connection, schema: str) -> None:
    """Create `schema` and every dataset table in it (used for scratch schemas too)."""
    async with conn.transaction():
        await conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        await conn.execute(f'SET LOCAL search_path = "{schema}", public')
        for path in _files("dataset"):
            await conn.execute(path.read_text())


async def _apply(conn: asyncpg.Connection, path: Path, scope: str, search_path: str | None) -> None:
    async with conn.transaction():
        if search_path:
            await conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{search_path}"')
            await conn.execute(f'SET LOCAL search_path = "{search_path}", public')
        await conn.execute(path.read_text())
        await conn.execute(
            "INSERT INTO public.schema_migrations (name, scope, checksum) VALUES ($1, $2, $3)",
            path.name, scope, _checksum(path),
        )


async def migrate(conn: asyncpg.Connection) -> list[str]:
    """Apply every pending migration; returns `scope/name` of those applied now."""
    applied_now: list[str] = []
    await conn.execute("SELECT pg_advisory_lock($1)", _LOCK_KEY)
    try:
        await _ensure_table(conn)
        done = {(r["name"], r["scope"]) for r in await conn.fetch("SELECT name, scope FROM public.schema_migrations")}
        for path in _files("global"):
            if (path.name, GLOBAL_SCOPE) not in done:
                await _apply(conn, path, GLOBAL_SCOPE, None)
                applied_now.append(f"{GLOBAL_SCOPE}/{path.name}")
        for dataset in DATASETS:
            schema = pg_schema(dataset)
            for path in _files("dataset"):
                if (path.name, schema) not in done:
                    await _apply(conn, path, schema, schema)
                    applied_now.append(f"{schema}/{path.name}")
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", _LOCK_KEY)
    return applied_now


async def is_migrated(conn: asyncpg.Connection) -> bool:
    """True when every migration file is recorded as applied."""
    try:  # one round trip: a database never migrated has no table at all
        rows = await conn.fetch("SELECT name, scope FROM public.schema_migrations")
    except asyncpg.UndefinedTableError:
        return False
    done = {(r["name"], r["scope"]) for r in rows}
    return _wanted() <= done


@cache
def _wanted() -> frozenset[tuple[str, str]]:
    wanted = {(p.name, GLOBAL_SCOPE) for p in _files("global")}
    wanted |= {(p.name, pg_schema(d)) for d in DATASETS for p in _files("dataset")}
    return frozenset(wanted)
