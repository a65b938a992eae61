"""`client.wire.subscribe` as a slow consumer, against the real Wire (granian, the projector, the
broker): the consumer stops pulling events, so the client stops reading its socket; the server
warns it (`slow_consumer`) and closes 4108 once its send queue overflows; the consumer goes on,
the client resumes its session, and its folded state equals the read model's, every delta in
order, nothing missed and nothing twice.

Two topics share the connection (and so its send queue): the market under test, whose quotes go
through the projector, and a second market of the same game that the test floods, as
tests/integration/test_wire_slow.py does, with deltas padded to 8 KiB written to `wire.deltas`
directly, so several MB pass in seconds. Each of those changes nothing: its `data` is the market
as the read model has it with no lines, and the padding is an envelope member clients ignore. A
second consumer of the flooded topic that keeps reading tells when the fan-out has handed the
whole flood over (the stalled connection's queue has overflowed by then); the stalled consumer
goes on at once, well within the seconds the server waits for it to take the warning and the
close frame."""

from __future__ import annotations

import asyncio

import client
from client.fold import fold
from tests.integration.wire_support import flood_deltas, market_now, publish_round, until, wire_stack
from tests.support import projection_events as ev

GAMES = ev.schedule(1)
GID = GAMES[0].game_id
MID = ev.market_id(GID, "game", "h2h", "full", None)
FLOODED = ev.market_id(GID, "game", "totals", "full", None)
TOPIC, FLOOD_TOPIC = f"market:{MID}", f"market:{FLOODED}"
DELTAS, PAD, PER_TENTH = 1200, 8192, 30  # 9.6 MB at 2.4 MB/s: past the buffers (a few MB) and the queue


async def test_a_stalled_consumer_is_closed_4108_resumes_and_matches_the_read_model(settings, topics, tmp_path):
    events = [*GAMES, *ev.season_quotes(GAMES, ("dk", "fd", "mgm"), 2, seed=5)]
    # pings at the default 20 s: the stall is never taken for a dead connection (4100)
    queue = {"SVC_WIRE_PING_SECONDS": "20", "SVC_WIRE_SEND_QUEUE_MESSAGES": "200",
             "SVC_WIRE_SEND_QUEUE_BYTES": str(1 << 20)}
    async with wire_stack(settings, tmp_path, events, **queue) as (_, key, base):
        svc = client.AsyncClient(base_url=base, api_key=key)
        sub, witness = svc.wire.subscribe([TOPIC, FLOOD_TOPIC]), svc.wire.subscribe([FLOOD_TOPIC])
        got, flowing = [], asyncio.Event()
        flowing.set()

        async def consume() -> None:
            async for event in sub:
                got.append(event)
                await flowing.wait()  # stalled: the client reads nothing more meanwhile

        async def keep_up() -> None:
            async for _ in witness:
                pass

        tasks = [asyncio.create_task(consume()), asyncio.create_task(keep_up())]
        try:
            first_seq, _ = await market_now(settings, MID)
            flood_seq, flood_data = await market_now(settings, FLOODED)
            await until(lambda: sub.seqs.get(TOPIC) == first_seq and sub.seqs.get(FLOOD_TOPIC) == flood_seq
                         and witness.seqs.get(FLOOD_TOPIC) == flood_seq, 30, "no snapshots")
            await publish_round(settings, GID, 0)
            seq, _ = await market_now(settings, MID)
            await until(lambda: sub.seqs.get(TOPIC) == seq, 30, "deltas did not arrive")

            flowing.clear()
            await publish_round(settings, GID, 1)  # real changes the stalled consumer misses for now
            last_flood = flood_seq + DELTAS
            await flood_deltas(settings, FLOOD_TOPIC, flood_seq + 1, DELTAS, PER_TENTH,
                               data={**flood_data, "lines": []}, padding="x" * PAD)
            await until(lambda: witness.seqs.get(FLOOD_TOPIC) == last_flood, 60, "the flood was not fanned out")
            flowing.set()

            await publish_round(settings, GID, 2)
            last_seq, snapshot = await market_now(settings, MID)
            _, flood_snapshot = await market_now(settings, FLOODED)
            await until(lambda: sub.seqs.get(TOPIC) == last_seq and sub.seqs.get(FLOOD_TOPIC) == last_flood,
                         60, "the stalled consumer did not resume and catch up")
        finally:
            await sub.aclose()
            await witness.aclose()
            for task in tasks:
                task.cancel()
            await svc.aclose()

    assert "slow_consumer" in {w.get("code") for w in sub.warnings}
    assert 4108 in sub.closes and sub.resumes >= 1
    assert sub.snapshots == 2  # one per topic: resumed, never started over
    deltas = {t: [e.seq for e in got if e.topic == t and e.op == "delta"] for t in (TOPIC, FLOOD_TOPIC)}
    assert deltas[TOPIC] == list(range(first_seq + 1, last_seq + 1))
    assert deltas[FLOOD_TOPIC] == list(range(flood_seq + 1, last_flood + 1))
    assert sub.states[TOPIC] == fold(None, "market.update", snapshot)
    assert sub.states[FLOOD_TOPIC] == fold(None, "market.update", flood_snapshot)
