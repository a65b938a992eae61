"""The reference library's relevance figure: the share of a query set (reference_queries.toml)
whose expected entry ranks in the top 3 of `GET /v1/reference?q=` (the route's own query)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from api.queries.library import relevance_page

QUERIES = Path(__file__).with_name("reference_queries.toml")
TOP = 3


@dataclass(frozen=True)
class Query:
    q: str
    expect: str
    held_out: bool


def load_queries(path: Path = QUERIES) -> list[Query]:
    raw = tomllib.loads(path.read_text())["queries"]
    return [Query(r["q"], r["expect"], bool(r.get("held_out", False))) for r in raw]


async def ranked(conn: asyncpg.Connection, schema: str, q: str, limit: int = TOP) -> list[str]:
    rows = await relevance_page(conn, schema, q=q, kind=None, jurisdiction=None, product=None, operator=None,
                                offset=0, limit=limit)
    return [r["slug"] for r in rows]


async def relevance(conn: asyncpg.Connection, schema: str, queries: list[Query]) -> tuple[float, list[tuple]]:
    """(share found in the top 3, misses as (query, expected, what came first))."""
    misses = []
    for query in queries:
        top = await ranked(conn, schema, query.q)
        if query.expect not in top:
            misses.append((query.q, query.expect, top))
    return 1 - len(misses) / len(queries), misses
