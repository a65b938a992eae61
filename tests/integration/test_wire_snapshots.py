"""A Wire snapshot read from Postgres equals what a client gets by applying every delta of the
topic from seq 1: the projector's deltas and the stream's snapshots describe one state."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta, timezone

import msgspec

from api.queries import games as games_sql, wire as wire_sql
from infra.db import connect
from tests.support import projection_events as ev
from tests.support.projection_harness import projector, run_to_end, wire_deltas
from wire.fanout import delta_of
from wire.snapshots import apply_delta, game_snapshot, market_snapshot

GAMES = ev.schedule(4)
BOOKS = ("dk", "fd", "mgm", "czr")


def normal(value):
    """JSON-shaped, as a client sees both (datetimes as text, numbers as numbers)."""
    return msgspec.json.decode(msgspec.json.encode(value))


async def test_a_snapshot_equals_the_topics_deltas_applied_from_seq_1(settings, topics):
    g0, g1 = GAMES[0].game_id, GAMES[1].game_id
    h2h = ev.market_id(g0, "game", "h2h", "full", None)
    totals = ev.market_id(g1, "game", "totals", "full", None)
    events = [
        *GAMES,
        *ev.season_quotes(GAMES, BOOKS, 6, seed=7),  # spreads and totals wander over three points each
        ev.state(g0, "live", minute=30, home=7, away=3, period="Q2", clock="05:00", last_play="TD"),
        ev.suspended(g0, h2h, minute=31),  # the whole market
        ev.reopened(g0, h2h, minute=32),
        ev.suspended(g0, h2h, book="dk", minute=33, reason="line review"),  # one book
        ev.quote(g0, "fd", [-200, 170], minute=34),
        ev.state(g1, "final", minute=40, home=20, away=17, period="F", clock=None),
        ev.suspended(g1, totals, minute=41, reason="weather"),  # stays suspended: its lines are gone
    ]
    await ev.publish(settings, events)
    async with projector(settings) as p:
        await run_to_end(p)

    folded: dict[str, dict] = {}
    last: dict[str, int] = defaultdict(int)
    for topic, value, envelope in await wire_deltas(settings):
        assert envelope.seq == last[topic] + 1
        last[topic] = envelope.seq
        served = delta_of(value)  # as the Wire serves it
        folded[topic] = apply_delta(folded.get(topic), envelope.type, msgspec.json.decode(served.payload)["data"])
    assert any(t.startswith("game:") for t in folded) and sum(t.startswith("market:") for t in folded) >= 12

    conn = await connect(settings.database_url)
    try:
        for topic, state in folded.items():
            kind, _, ident = topic.partition(":")
            if kind == "game":
                row = await wire_sql.game_row(conn, "live", ident)
                snapshot = game_snapshot(row)
            else:
                row, lines = await wire_sql.market_rows(conn, "live", ident)
                snapshot = market_snapshot(row, lines)
            assert row["last_seq"] == last[topic], topic
            assert normal(snapshot) == state, topic
    finally:
        await conn.close()
    market = folded[f"market:{h2h}"]
    assert market["reason"] is None and market["status"] == "open"  # reopened; one book's suspension aside
    assert folded[f"game:{g1}"]["status"] == "final"
    suspended = folded[f"market:{totals}"]
    assert (suspended["status"], suspended["reason"], suspended["lines"]) == ("suspended", "weather", [])


async def test_a_game_past_its_kickoff_with_no_report_is_result_unknown_on_the_wire_as_on_rest(settings, topics):
    """The read model stores `scheduled` for a game no source reported on; REST serves
    `result_unknown` once its kickoff has passed, and so do its Wire snapshot and deltas."""
    past, ahead = ev.game("KC", "BAL"), ev.game("DET", "LA", kickoff=datetime.now(timezone.utc) + timedelta(days=30))
    await ev.publish(settings, [past, ahead])
    async with projector(settings) as p:
        await run_to_end(p)
    deltas = {topic: value for topic, value, _ in await wire_deltas(settings)}
    conn = await connect(settings.database_url)
    try:
        for game, expected in ((past, "result_unknown"), (ahead, "scheduled")):
            stored = await conn.fetchval("SELECT status FROM live.games WHERE id = $1", game.game_id)
            assert stored == "scheduled"  # what the sources said
            rest = await games_sql.get_game(conn, "live", game.game_id)
            snapshot = game_snapshot(await wire_sql.game_row(conn, "live", game.game_id))
            delta = delta_of(deltas[f"game:{game.game_id}"])
            assert (rest["status"], snapshot.status, delta.status) == (expected,) * 3, game.name
            assert msgspec.json.decode(delta.payload)["data"]["status"] == expected
            assert msgspec.json.decode(delta.payload)["seq"] == 1
            fresh = await wire_sql.game_freshness(conn, "live", [game.game_id])
            assert fresh[0]["status"] == expected
    finally:
        await conn.close()
