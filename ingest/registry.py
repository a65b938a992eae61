"""The identity registry in Postgres (schema `ingest`, per dataset), batch by batch.

For each batch: load the registry rows of its claims and the index rows it could match or
look up (two queries), resolve in memory with the same rules as the sandbox and the
tests (ingest/resolution.py), then write back what changed (one statement).
"""

from __future__ import annotations

import asyncpg

from ingest.records import GameClaim, Record
from ingest.resolution import BatchResolution, IndexedGame, MemoryResolver, claims_of
from schemas.datasets import Dataset


class PgResolver:
    def __init__(self, conn: asyncpg.Connection, dataset: Dataset) -> None:
        self.conn = conn
        self.dataset = dataset

    async def resolve(self, records: list[Record]) -> BatchResolution:
        claims, weeks, identities = claims_of(records)
        memory = MemoryResolver()
        ds = self.dataset
        if claims:
            rows = await self.conn.fetch(
                """
                SELECT i.source, i.source_id, i.entity_id, i.kickoff_at, i.kickoff_date
                FROM ingest.identities i
                JOIN unnest($2::text[], $3::text[]) AS q(source, source_id) USING (source, source_id)
                WHERE i.dataset = $1 AND i.kind = 'game'
                """,
                ds, [c.source for c in claims], [c.source_id for c in claims],
            )
            for r in rows:
                memory.registry[(r["source"], r["source_id"])] = (r["entity_id"], r["kickoff_at"], r["kickoff_date"])
        triples = sorted({(c.competition, c.home_team_id, c.away_team_id) for c in claims})
        known_ids = [v[0] for v in memory.registry.values()]
        week_keys = sorted({(w.competition, w.season, w.week, w.team_id) for w in weeks})
        if triples or known_ids or week_keys:
            rows = await self.conn.fetch(
                """
                SELECT g.* FROM ingest.games g
                WHERE g.dataset = $1 AND (
                    (g.competition, g.home_team_id, g.away_team_id) IN (
                        SELECT * FROM unnest($2::text[], $3::text[], $4::text[]))
                    OR g.game_id = ANY($5::text[])
                    OR (g.competition, g.season, g.week, g.home_team_id) IN (
                        SELECT * FROM unnest($6::text[], $7::text[], $8::int[], $9::text[]))
                    OR (g.competition, g.season, g.week, g.away_team_id) IN (
                        SELECT * FROM unnest($6::text[], $7::text[], $8::int[], $9::text[])))
                """,
                ds, [t[0] for t in triples], [t[1] for t in triples], [t[2] for t in triples], known_ids,
                [w[0] for w in week_keys], [w[1] for w in week_keys], [w[2] for w in week_keys],
                [w[3] for w in week_keys],
            )
            for r in rows:
                memory.add(IndexedGame(
                    r["game_id"], r["competition"], r["home_team_id"], r["away_team_id"], r["kickoff_sort"],
                    r["kickoff_at"], r["season"], r["week"], r["owner"],
                ))
        resolution = memory.resolve_now(records)
        await self._write(memory, identities)
        return resolution

    async def register(self, claims: list[GameClaim]) -> BatchResolution:
        """Record games resolved elsewhere (the sandbox day, built in memory) in this registry."""
        return await self.resolve([Record(i, "", "", _no_events, claims=(c,)) for i, c in enumerate(claims)])

    async def _write(self, memory: MemoryResolver, identities: list) -> None:
        """What the batch changed, in one statement (one round trip on the batch's critical
        path, not three): the game claims, the index rows they touched, the source IDs of teams
        and players. Game claims and the other identities never share a row (kind differs)."""
        if not memory.touched and not identities:
            return
        entries = list(memory.registry.items()) if memory.touched else []
        games = [memory.index[g] for g in memory.touched]
        await self.conn.execute(
            """
            WITH claims AS (
                INSERT INTO ingest.identities (dataset, kind, source, source_id, entity_id, kickoff_at, kickoff_date)
                SELECT $1, 'game', * FROM unnest($2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::date[])
                ON CONFLICT (dataset, kind, source, source_id)
                DO UPDATE SET kickoff_at = EXCLUDED.kickoff_at, kickoff_date = EXCLUDED.kickoff_date
            ), indexed AS (
                INSERT INTO ingest.games (dataset, game_id, competition, home_team_id, away_team_id,
                                          kickoff_sort, kickoff_at, season, week, owner)
                SELECT $1, * FROM unnest($7::text[], $8::text[], $9::text[], $10::text[],
                                         $11::timestamptz[], $12::timestamptz[], $13::text[], $14::int[], $15::text[])
                ON CONFLICT (dataset, game_id) DO UPDATE SET
                    kickoff_sort = EXCLUDED.kickoff_sort, kickoff_at = EXCLUDED.kickoff_at,
                    season = EXCLUDED.season, week = EXCLUDED.week
            )
            INSERT INTO ingest.identities (dataset, kind, source, source_id, entity_id)
            SELECT $1, * FROM unnest($16::text[], $17::text[], $18::text[], $19::text[])
            ON CONFLICT DO NOTHING
            """,
            self.dataset, [k[0] for k, _ in entries], [k[1] for k, _ in entries], [v[0] for _, v in entries],
            [v[1] for _, v in entries], [v[2] for _, v in entries],
            [g.game_id for g in games], [g.competition for g in games], [g.home_team_id for g in games],
            [g.away_team_id for g in games], [g.kickoff_sort for g in games], [g.kickoff_at for g in games],
            [g.season for g in games], [g.week for g in games], [g.owner for g in games],
            [i.kind for i in identities], [i.source for i in identities], [i.source_id for i in identities],
            [i.entity_id for i in identities],
        )


def _no_events(_resolution) -> list:
    return []


async def game_ids_for(conn: asyncpg.Connection, dataset: Dataset, source: str, source_ids: list[str]) -> dict[str, str]:
    """The `gm_` each of a source's game IDs resolved to (for tools and tests)."""
    rows = await conn.fetch(
        "SELECT source_id, entity_id FROM ingest.identities WHERE dataset = $1 AND kind = 'game' "
        "AND source = $2 AND source_id = ANY($3::text[])",
        dataset, source, source_ids,
    )
    return {r["source_id"]: r["entity_id"] for r in rows}
