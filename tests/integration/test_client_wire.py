"""`client.wire.subscribe` and `client.wire.stream` against the real Wire (granian, the projector, the broker):
the API process is killed outright mid-stream, deltas keep coming while it is down, a new
process comes up at the same address; the consumer resumes its session and its folded state
equals the read model's, seq by seq with nothing missed and nothing twice; then its TCP
connection is dropped under it (no close frame) and it resumes again."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import client
from client.fold import fold
from infra.net import free_port
from tests.integration.test_wire_crash import kill_outright
from tests.integration.wire_support import market_now, publish_round, until, wire_stack
from tests.support import projection_events as ev
from tests.support.live_server import api_process

GAMES = ev.schedule(1)
BOOKS = ("dk", "fd", "mgm")
GID = GAMES[0].game_id
MID = ev.market_id(GID, "game", "h2h", "full", None)
TOPIC = f"market:{MID}"


async def test_the_consumer_resumes_after_the_api_process_is_killed_and_matches_the_read_model(
        settings, topics, tmp_path):
    async with wire_stack(settings, tmp_path, [*GAMES, *ev.season_quotes(GAMES, BOOKS, 2, seed=3)]) as (_, key, _):
        env = {"KAFKA_BOOTSTRAP": settings.kafka_bootstrap, "SVC_TOPIC_NAMESPACE": settings.topic_namespace,
               "SVC_WIRE_PING_SECONDS": "0.5"}
        port = free_port()
        run = (settings.database_url, settings.data_dir, settings.key_secret)
        events: list = []
        with api_process(*run, tmp_path / "first.log", port=port, **env) as (base, proc):
            svc = client.AsyncClient(base_url=base, api_key=key)
            sub = svc.wire.subscribe([TOPIC])

            async def consume() -> None:
                async for event in sub:
                    events.append(event)

            consumer = asyncio.create_task(consume())
            sse = svc.wire.stream(TOPIC)
            sse_events: list = []

            async def consume_sse() -> None:
                async for event in sse:
                    sse_events.append(event)

            sse_consumer = asyncio.create_task(consume_sse())
            first_seq, _ = await market_now(settings, MID)
            await until(lambda: sub.seqs.get(TOPIC) == first_seq, 20, "no snapshot")
            assert events[0].op == "snapshot" and events[0].seq == first_seq
            # the stream's snapshot too, before any delta: its request may go out later than the
            # socket's (a full run under load 17 opened it after round 0: its deltas began at 6)
            await until(lambda: sse.seq == first_seq, 20, "no snapshot over server-sent events")
            await publish_round(settings, GID, 0)
            seq, _ = await market_now(settings, MID)
            await until(lambda: sub.seqs.get(TOPIC) == seq, 20, "deltas did not arrive")
            kill_outright(proc.pid)
        # deltas while no API process runs: the resume must replay them
        await publish_round(settings, GID, 1)
        with api_process(*run, tmp_path / "second.log", port=port, **env) as (base, _):
            seq, _ = await market_now(settings, MID)
            await until(lambda: sub.seqs.get(TOPIC) == seq, 30, "the consumer did not resume")
            await publish_round(settings, GID, 2)
            last_seq, snapshot = await market_now(settings, MID)
            await until(lambda: sub.seqs.get(TOPIC) == last_seq, 20, "deltas after the resume did not arrive")
            await until(lambda: sse.seq == last_seq, 30, "the server-sent events did not catch up")
            # over SSE: reopened with Last-Event-ID, missed changes replayed, no second snapshot
            assert sse.reconnects >= 1 and sse.snapshots == 1
            assert [e.seq for e in sse_events if e.op == "delta"] == list(range(first_seq + 1, last_seq + 1))
            assert sse.state == fold(None, "market.update", snapshot)
            assert sub.resumes >= 1 and sub.snapshots == 1  # resumed, never re-snapshotted
            deltas = [e.seq for e in events if e.op == "delta"]
            assert deltas == list(range(first_seq + 1, last_seq + 1))
            assert sub.states[TOPIC] == fold(None, "market.update", snapshot)
            # the TCP connection dropped under the client (no close frame): it resumes again
            resumes = sub.resumes
            sub._ws.transport.abort()
            await publish_round(settings, GID, 3)
            last_seq, snapshot = await market_now(settings, MID)
            await until(lambda: sub.seqs.get(TOPIC) == last_seq, 30, "no resume after the dropped connection")
            assert sub.resumes > resumes and sub.snapshots == 1
            assert [e.seq for e in events if e.op == "delta"] == list(range(first_seq + 1, last_seq + 1))
            assert sub.states[TOPIC] == fold(None, "market.update", snapshot)
            # `svc watch` on the same client prints the topic's snapshot at its last seq
            watched = await asyncio.to_thread(
                subprocess.run, [sys.executable, "-m", "cli.main", "watch", TOPIC, "--url", base, "--count", "1"],
                capture_output=True, text=True, timeout=60, env={**os.environ, "SVC_API_KEY": key})
            assert watched.returncode == 0, watched.stderr
            assert f"{last_seq} {TOPIC} market.update" in " ".join(watched.stdout.split())
            await sub.aclose()
            await sse.aclose()
            consumer.cancel()
            sse_consumer.cancel()
            await svc.aclose()
