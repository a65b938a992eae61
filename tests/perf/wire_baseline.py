"""The Wire fan-out bench's baseline (`make bench` only): a bare broadcast server written with the
`websockets` library, doing the least a Wire server must do for the same clients.

It reads the same `wire.deltas` topic the API's fan-out reads (the same consumer settings, from
the log end as of its start) and sends each record's value, as a text frame, to every socket
subscribed to the record's key, with `websockets.broadcast`. A client sends one
`{"op": "subscribe", "topics": [...]}` and is answered `{"op": "ack"}`; no tickets, no limits, no
snapshots, no seq checks, no send queues.

    python -m tests.perf.wire_baseline --bootstrap B --topic T --port P

Prints `ready` once listening and positioned at the log end; stops on SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal

from websockets.asyncio.server import broadcast, serve

from infra.kafka import make_consumer
from infra.settings import load_settings
from infra.aiokafka_adapter import partitions_of
from projections.log_ends import high_watermarks

ACK = json.dumps({"op": "ack"})


async def main(args) -> None:
    subscribers: dict[str, set] = {}

    async def handler(ws) -> None:
        first = json.loads(await ws.recv())
        topics = list(first.get("topics") or [])
        for topic in topics:
            subscribers.setdefault(topic, set()).add(ws)
        await ws.send(ACK)
        try:
            async for _ in ws:  # the client's pongs: nothing to do
                pass
        finally:
            for topic in topics:
                subscribers.get(topic, set()).discard(ws)

    settings = load_settings(env={}, use_stack=False, kafka_bootstrap=args.bootstrap)
    # as the API's fan-out reads wire.deltas (wire/fanout.py)
    consumer = make_consumer(settings, fetch_max_wait_ms=20, auto_offset_reset="latest")
    await consumer.start()
    tps = await partitions_of(consumer, [args.topic])
    ends = await high_watermarks(consumer, tps)
    for tp in tps:
        consumer.seek(tp, ends[(tp.topic, tp.partition)])
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    async with serve(handler, "127.0.0.1", args.port, max_size=1 << 16, ping_interval=20):
        print("ready", flush=True)
        waiting = asyncio.ensure_future(stop.wait())
        while not stop.is_set():
            fetch = asyncio.ensure_future(consumer.getmany(timeout_ms=200, max_records=500))
            await asyncio.wait({fetch, waiting}, return_when=asyncio.FIRST_COMPLETED)
            if not fetch.done():
                fetch.cancel()
                break
            for records in fetch.result().values():
                for record in records:
                    subs = subscribers.get(record.key.decode())
                    if subs:
                        broadcast(subs, record.value.decode())
            await asyncio.sleep(0)
    await consumer.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--port", type=int, required=True)
    asyncio.run(main(parser.parse_args()))
