"""The live benchmark's load and watchers, each in a process of its own (`make bench` only).

In one process, the load's sends and three watchers' receipts shared an event loop, and every
timestamp included the others' work (a 2 ms Postgres poll among them). Apart, each side only
waits on what it measures; they still share the machine's two cores with the broker, Postgres
and the projector.
`time.perf_counter()` reads CLOCK_MONOTONIC, which all processes of a Linux machine share.

    python -m tests.perf.live_probe load --bootstrap B --topic T --rate R --seconds S --out F [--burst N] [--start N]
    python -m tests.perf.live_probe topic --bootstrap B --topic T --out F [--deltas]
    python -m tests.perf.live_probe tracking --database-url D --schema S --topic T --out F

Watchers print `ready` once listening and write what they saw when their stdin closes. The
load writes `[partition, offset, source_ts_us, sent_at]` per event when done.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from datetime import timedelta
from decimal import Decimal

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from projections.event_time import to_us
from schemas.events import Outcome, PriceQuoted, encode
from schemas.natural_keys import market_id
from tests.support import projection_events as ev

PRICES = (-150, -140, -130, -120, -110, 100, 110)
GAMES = ev.schedule(100)
BASE = ev.at(10_000)


def quote(n: int) -> PriceQuoted:
    """The n-th event of the load: one book per market, so every quote moves its consensus."""
    g = GAMES[n % len(GAMES)]
    mtype = ("h2h", "spreads", "totals")[(n // len(GAMES)) % 3]
    point = {"h2h": None, "spreads": Decimal("-3.5"), "totals": Decimal("47.5")}[mtype]
    sels = ("over", "under") if mtype == "totals" else ("home", "away")
    price = PRICES[(n // 300) % len(PRICES)]
    pts = (point, point) if mtype == "totals" else ((point, -point) if point is not None else (None, None))
    return PriceQuoted(
        event_id=f"evt_live{n:012d}", source="bench", source_id=str(n),
        source_ts=BASE + timedelta(microseconds=1000 * n), ingest_ts=BASE, game_id=g.game_id,
        market_id=market_id(g.game_id, "game", mtype, "full", None), book="solo", kind="game", market_type=mtype,
        point=point, outcomes=[Outcome(selection=s, name=s, price=Decimal(pr), price_format="american", point=pt)
                               for s, pr, pt in zip(sels, (price, 100 + abs(price) // 2), pts)],
    )


async def load(args) -> None:
    # the service's producer settings (infra.kafka.make_producer): acks=all, linger 5 ms
    producer = AIOKafkaProducer(bootstrap_servers=args.bootstrap, acks="all", linger_ms=5, max_batch_size=1 << 20,
                                enable_idempotence=False)
    await producer.start()
    sent: list[list] = []
    n = args.start
    try:
        if args.burst:
            futures = []
            for _ in range(args.burst):
                n += 1
                e = quote(n)
                futures.append(await producer.send(args.topic, encode(e), key=e.game_id.encode()))
            await asyncio.gather(*futures)
        started = time.perf_counter()
        pending: list[tuple[asyncio.Future, int, float]] = []
        done = 0
        while (elapsed := time.perf_counter() - started) < args.seconds:
            due = int(elapsed * args.rate) + 1
            while done < due:
                n += 1
                done += 1
                e = quote(n)
                t = time.perf_counter()
                pending.append((await producer.send(args.topic, encode(e), key=e.game_id.encode()), to_us(e.source_ts), t))
            still = []
            for fut, us, t in pending:
                if fut.done():
                    md = fut.result()
                    sent.append([md.partition, md.offset, us, t])
                else:
                    still.append((fut, us, t))
            pending = still
            await asyncio.sleep(0.001)
        for fut, us, t in pending:
            md = await fut
            sent.append([md.partition, md.offset, us, t])
    finally:
        await producer.stop()
    with open(args.out, "w") as f:
        json.dump(sent, f)


async def _until_stdin_closes() -> None:
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)


async def topic(args) -> None:
    """(partition, offset) -> first receipt, or for `--deltas` source_ts_us -> first receipt."""
    from schemas.wire import decode_envelope

    consumer = AIOKafkaConsumer(bootstrap_servers=args.bootstrap, fetch_max_wait_ms=5, enable_auto_commit=False,
                                auto_offset_reset="latest")
    await consumer.start()
    seen: dict[str, float] = {}
    try:
        from infra.aiokafka_adapter import partitions_of

        while not (tps := await partitions_of(consumer, [args.topic])):
            pass  # not created yet: each call refreshes the consumer's metadata
        consumer.assign(tps)
        await consumer.seek_to_end(*tps)
        for tp in tps:
            await consumer.position(tp)
        print("ready", flush=True)
        closed = asyncio.ensure_future(_until_stdin_closes())
        while not closed.done():
            data = await consumer.getmany(timeout_ms=20)
            now = time.perf_counter()
            for records in data.values():
                for r in records:
                    key = str(to_us(decode_envelope(r.value).source_ts)) if args.deltas else f"{r.partition}:{r.offset}"
                    seen.setdefault(key, now)
    finally:
        await consumer.stop()
    with open(args.out, "w") as f:
        json.dump(seen, f)


async def tracking(args) -> None:
    """(partition, offset) -> the moment its tracking row (the read models it wrote) committed,
    woken by the read models' change notifications (a 20 ms poll as a backstop)."""
    import asyncpg

    from infra.channels import read_models

    conn = await asyncpg.connect(args.database_url)
    listener = await asyncpg.connect(args.database_url)
    seen: dict[str, float] = {}
    applied: dict[int, int] = {}
    wake = asyncio.Event()
    await listener.add_listener(read_models(args.schema), lambda *_: wake.set())
    sql = f'SELECT partition, last_offset FROM "{args.schema}".tracking WHERE topic = $1'
    for r in await conn.fetch(sql, args.topic):
        applied[r["partition"]] = r["last_offset"]
    print("ready", flush=True)
    closed = asyncio.ensure_future(_until_stdin_closes())
    try:
        while not closed.done():
            try:
                await asyncio.wait_for(wake.wait(), 0.02)
            except asyncio.TimeoutError:
                pass
            wake.clear()
            rows = await conn.fetch(sql, args.topic)
            now = time.perf_counter()
            for r in rows:
                before = applied.get(r["partition"], -1)
                for offset in range(before + 1, r["last_offset"] + 1):
                    seen[f"{r['partition']}:{offset}"] = now
                applied[r["partition"]] = max(before, r["last_offset"])
    finally:
        await listener.close()
        await conn.close()
    with open(args.out, "w") as f:
        json.dump(seen, f)


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("load")
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--topic", required=True)
    p.add_argument("--rate", type=int, required=True)
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--burst", type=int, default=0)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--out", required=True)
    p = sub.add_parser("topic")
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--topic", required=True)
    p.add_argument("--deltas", action="store_true")
    p.add_argument("--out", required=True)
    p = sub.add_parser("tracking")
    p.add_argument("--database-url", required=True)
    p.add_argument("--schema", required=True)
    p.add_argument("--topic", required=True)
    p.add_argument("--out", required=True)
    args = parser.parse_args()
    asyncio.run({"load": load, "topic": topic, "tracking": tracking}[args.command](args))


if __name__ == "__main__":
    main()
