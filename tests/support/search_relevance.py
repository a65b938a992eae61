"""Search relevance over a query set as people type it (search_queries.toml): the share of
queries, per kind, whose expected entity is the first result of `/v1/search`'s own query with no
kind filter (what a person typing into one box gets)."""

from __future__ import annotations

import tomllib
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from api.queries.search import search

QUERIES = Path(__file__).with_name("search_queries.toml")


@dataclass(frozen=True)
class Query:
    q: str
    kind: str
    expect: str  # a name; for a game, "Team A|Team B" (both in the game's name)

    def hit(self, row) -> bool:
        if row is None or row["kind"] != self.kind:
            return False
        if self.kind == "game":
            return all(team in row["name"] for team in self.expect.split("|"))
        return row["name"] == self.expect


def load_queries(path: Path = QUERIES) -> list[Query]:
    return [Query(r["q"], r["kind"], r["expect"]) for r in tomllib.loads(path.read_text())["queries"]]


async def relevance(conn: asyncpg.Connection, schema: str, queries: list[Query]) -> tuple[dict[str, float], list]:
    """({kind: top-1 share}, misses as (query, expected, what came first))."""
    found: dict[str, list[bool]] = defaultdict(list)
    misses = []
    for query in queries:
        rows = await search(conn, schema, q=query.q, kinds=None, competition=None, offset=0, limit=1)
        first = rows[0] if rows else None
        ok = query.hit(first)
        found[query.kind].append(ok)
        if not ok:
            misses.append((query.q, query.expect, None if first is None else (first["kind"], first["name"])))
    return {kind: sum(v) / len(v) for kind, v in found.items()}, misses
