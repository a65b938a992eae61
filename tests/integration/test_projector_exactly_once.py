"""Exactly-once into Postgres on a real broker and database: redelivered records change nothing
and take no new seq; every topic's deltas on wire.deltas run 1..n; read models hold what the
events say."""

from __future__ import annotations

from datetime import date

import asyncpg
import msgspec

from infra.db import connect

from projections.batch import BatchCore
from tests.support import projection_events as ev
from tests.support.projection_harness import projector, run_to_end, seq_runs, wire_deltas

G = ev.game()
GID = G.game_id
P = ev.player("00-0033873", "Patrick Mahomes")


def events():
    return [
        ev.team("KC", "Kansas City Chiefs", aliases=["KC Chiefs"]), ev.team("BAL", "Baltimore Ravens"), G, P,
        ev.quote(GID, "dk", [-150, 130], minute=1), ev.quote(GID, "fd", [-145, 125], minute=2),
        ev.quote(GID, "dk", [-110, -110], market_type="spreads", point="-3", minute=2),
        ev.state(GID, "live", minute=3, home=7, away=0, period="Q1", clock="08:12"),
        ev.quote(GID, "dk", [-160, 140], minute=4),
        ev.injury(P.player_id, "Questionable", minute=1), ev.news(P.player_id, "Limited in practice", minute=2),
        ev.stat_line(P.player_id, GID, 1, {"passing_yards": 291, "passing_epa": "10.25"}, minute=5),
    ]


async def snapshot(url: str) -> dict[str, list]:
    conn = await asyncpg.connect(url)
    try:
        out = {}
        for table in ("games", "markets", "market_lines", "book_prices", "players", "teams", "injuries", "news",
                      "stat_lines", "topic_seq", "tracking", "search_index", "sports", "competitions", "seasons"):
            out[table] = [tuple(r) for r in await conn.fetch(f"SELECT * FROM live.{table} ORDER BY 1, 2")]
        return out
    finally:
        await conn.close()


async def test_redelivery_is_a_no_op_and_seqs_run_one_to_n(settings, topics):
    await ev.publish(settings, events())
    async with projector(settings) as p:
        assert await run_to_end(p) == len(events())
    first = await snapshot(settings.database_url)

    # the same records once more, as a consumer restarted from an old offset would see them
    async with projector(settings) as p:
        p.core.tracking.clear()  # forget the in-memory offsets: only Postgres may stop the replay
        assert await run_to_end(p) == 0
    async with projector(settings) as p:
        core_tracking = dict(p.core.tracking)
        p.core = BatchCore(p.core.window_us)  # a projector that forgot all it knew
        p.core.tracking = core_tracking
        assert await run_to_end(p) == 0
    assert await snapshot(settings.database_url) == first

    runs = seq_runs(await wire_deltas(settings))
    assert runs[f"game:{GID}"] == [1, 2]  # scheduled, then live
    market_runs = [r for t, r in runs.items() if t.startswith("market:")]
    assert sorted(map(len, market_runs)) == [1, 3]  # spreads once; h2h on each change
    assert all(r == list(range(1, len(r) + 1)) for r in runs.values())
    seqs = {r[0]: r[1] for r in first["topic_seq"]}
    assert seqs == {t: r[-1] for t, r in runs.items()}


async def test_read_models_hold_state_provenance_and_last_seq(settings, topics):
    await ev.publish(settings, events())
    async with projector(settings) as p:
        await run_to_end(p)
    conn = await connect(settings.database_url)
    try:
        game = await conn.fetchrow("SELECT * FROM live.games WHERE id = $1", GID)
        assert (game["status"], game["score_home"], game["score_away"], game["period"], game["clock"]) == (
            "live", 7, 0, "Q1", "08:12")
        assert game["last_seq"] == 2 and game["source"] == "nflverse"
        assert game["state_provenance"]["source"] == "sandbox"
        assert game["provenance"]["known_by"] == [{"source": "nflverse", "source_id": "2024-09-05_BAL_KC"}]
        h2h = await conn.fetchrow("SELECT * FROM live.markets WHERE game_id = $1 AND type = 'h2h'", GID)
        assert (h2h["books"], h2h["status"], h2h["last_seq"]) == (2, "open", 3)
        line = await conn.fetchrow("SELECT * FROM live.market_lines WHERE market_id = $1", h2h["id"])
        assert line["is_main"] and line["books"] == 2 and line["source"] == "The Odds API"
        assert set(line["outcomes"][0]["probability"]) == {"multiplicative", "additive", "power", "shin", "odds_ratio"}
        books = await conn.fetch("SELECT book, outcomes FROM live.book_prices WHERE market_id = $1 ORDER BY book",
                                 h2h["id"])
        assert [(b["book"], b["outcomes"][0]["price"]) for b in books] == [("dk", "-160"), ("fd", "-145")]
        team = await conn.fetchrow("SELECT * FROM live.teams WHERE id = $1", ev.team("KC").team_id)
        assert team["aliases"] == ["KC Chiefs"] and team["abbreviation"] == "KC"
        lines = await conn.fetch("SELECT basis, game_id, stats FROM live.stat_lines WHERE subject_id = $1 "
                                 "ORDER BY basis, game_id NULLS FIRST", P.player_id)
        assert [(r["basis"], r["game_id"]) for r in lines] == [
            ("per_game", None), ("rate", None), ("total", None), ("total", GID)]
        assert lines[1]["stats"] == {}  # no rate among these stats (the API serves no empty line)
        assert lines[3]["stats"] == {"passing_epa": "10.25", "passing_yards": 291}
        injury = await conn.fetchrow("SELECT * FROM live.injuries WHERE player_id = $1", P.player_id)
        assert injury["status"] == "Questionable" and injury["source"] == "nflverse"
        season = await conn.fetchrow("SELECT * FROM live.seasons")
        assert (season["label"], str(season["starts_on"])) == ("2024", "2024-09-05")  # the kickoff game
        assert season["provenance"] == {"source": "nflverse", "source_ts": "2024-09-05T12:03:00.000000Z",
                                        "ingest_ts": "2024-09-05T12:00:00.000000Z",
                                        "dates_source": "Wikipedia, 2024 NFL season (season infobox)"}
        assert str(season["ends_on"]) == "2025-02-09"  # Super Bowl LIX: from the season table, not the games
        terms = {r["id"]: r["terms"] for r in await conn.fetch("SELECT id, terms FROM live.search_index")}
        assert terms[ev.team("KC").team_id] == "kansas city chiefs kc kc chiefs"
        assert (await conn.fetchval("SELECT count(*) FROM live.outbox")) == 0  # relayed and deleted
    finally:
        await conn.close()


async def test_a_second_projector_that_folded_the_same_records_reloads_instead_of_failing(settings, topics, tmp_path):
    """Two projectors of one group both fold the same records (both catching up at start): the
    one that commits second finds its deltas' seqs taken, reloads state from Postgres and skips
    what the other applied, instead of failing on the outbox's key."""
    await ev.publish(settings, events())
    elsewhere = msgspec.structs.replace(settings, data_dir=tmp_path / "second")  # its own state cache
    async with projector(settings, relay=False) as first, projector(elsewhere, relay=False) as second:
        assert await run_to_end(first) == len(events())
        assert await run_to_end(second) == 0
        assert second.stats.reloads == 1
        assert second.committed == first.committed
        rows = await first.conn.fetch("SELECT wire_topic, seq FROM live.outbox ORDER BY 1, 2")
    runs: dict[str, list[int]] = {}
    for topic, seq in rows:  # the relay is off: every delta is still in the outbox, each once
        runs.setdefault(topic, []).append(seq)
    assert runs and all(r == list(range(1, len(r) + 1)) for r in runs.values())


class _CommitsBetweenReads:
    """A projector's connection on which another projector of the group commits right after the
    state parts were read and before the quotes are: the moment a joining projector that reloads
    meets the other's commit (scale-out)."""

    def __init__(self, conn, meanwhile) -> None:
        self._conn, self._meanwhile, self.fired = conn, meanwhile, False

    def __getattr__(self, name):
        return getattr(self._conn, name)

    async def fetch(self, query, *args, **kwargs):
        rows = await self._conn.fetch(query, *args, **kwargs)
        if "projector_state" in query and not self.fired:
            self.fired = True
            await self._meanwhile()
        return rows


async def test_a_reload_reads_tracking_and_state_from_one_snapshot(settings, topics, tmp_path):
    """The second projector reloads (its tracking moved: the first committed) while the first
    commits a new game's quotes between the reload's reads: the reload sees tracking, state and
    quotes as of one moment (before that commit), and a catch-up then skips what the first applied.
    Read apart, the quotes of a market whose state it had not read stopped it with a KeyError."""
    later = ev.game("BUF", "MIA", day=date(2024, 9, 8))
    await ev.publish(settings, events())
    elsewhere = msgspec.structs.replace(settings, data_dir=tmp_path / "second")  # its own state cache
    async with projector(settings, relay=False) as first, projector(elsewhere, relay=False) as second:
        assert await run_to_end(first) == len(events())  # second's tracking is now behind Postgres
        more = [later, ev.quote(later.game_id, "dk", [-120, 100], minute=6),
                ev.quote(later.game_id, "fd", [-125, 105], minute=7)]
        await ev.publish(settings, more)

        async def first_commits() -> None:
            assert await run_to_end(first) == len(more)

        conn = _CommitsBetweenReads(second.conn, first_commits)
        await second.load(conn)
        assert conn.fired and second.stats.loaded_from == "postgres"
        assert later.game_id not in second.core.states  # as of before the first's commit, all of it
        assert second.committed != first.committed
        assert await run_to_end(second) == 0  # the fence finds the first's commit: reload, skip
        assert second.committed == first.committed
        assert second.core.states == first.core.states
