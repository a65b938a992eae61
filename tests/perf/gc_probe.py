"""The collector's pauses in the API process during the Wire fan-out, with and without freezing
open connections (infra/memory.py `settle_after_open`), side by side in the same minutes.

    .venv/bin/python -m tests.perf.gc_probe [--rounds 1] [--rates 10,20]

Not part of `make bench` (it compares two settings of one process, not the API with a baseline):
the same 2,000 clients and deltas as bench_wire_fanout, one API process at a time, alternately
"startup" (only start-up frozen, as before) and "open" (open connections frozen as they settle).
For each: the collector's passes by generation while the rates were offered (count, longest, in
all; `svc_gc_pause_seconds` on /metrics, as the bench reports it), and the delivery p50/p99 of the fan-out. Prints JSON
lines and the load average, which on a shared box moves every wall-time figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time


def __getattr__(name: str):
    """`tests.perf.gc_probe:startup_only_app`: the bench app with open connections never frozen."""
    if name == "startup_only_app":
        from infra import memory
        memory.settle_after_open = lambda: None  # before api.wire_live imports it
        from tests.perf.api_bench_app import app
        return app
    raise AttributeError(name)


async def _run(rounds: int, rates: tuple[int, ...]) -> None:
    from tests.perf import bench_wire_fanout as fan
    from tests.perf.run import bench_stack
    from tests.support.live_server import api_process

    async with bench_stack("svc-gcprobe-") as ctx:
        workdir = ctx.workdir
        settings, slate, plan_rows = await fan.prepare(ctx, fan.SOCKETS, "gc")
        readers = fan.SOCKETS // fan.GAMES
        deltas = fan.Deltas(settings, slate)
        await deltas.producer.start()
        env = {"KAFKA_BOOTSTRAP": settings.kafka_bootstrap, "SVC_TOPIC_NAMESPACE": settings.topic_namespace}
        try:
            for r in range(rounds):
                for mode, app in (("startup", "tests.perf.gc_probe:startup_only_app"),
                                  ("open", "tests.perf.api_bench_app:app")):
                    await deltas.settle(settings.database_url)
                    with api_process(settings.database_url, settings.data_dir, fan.KEY_SECRET,
                                     workdir / f"api-{mode}-{r}.log", app=app, **env) as (base, proc):
                        started = time.strftime("%H:%M:%S", time.gmtime())
                        result = await fan._measure(ctx, "api", fan._ws(base), base, [proc.pid], plan_rows, deltas,
                                                    readers, label=f"{mode}-{r}", rates=rates)
                    print(json.dumps({
                        "mode": mode, "round": r, "utc": started, "load": os.getloadavg(),
                        "gc_during_rates": result["gc"],
                        "phases": [{k: p[k] for k in ("rate", "delivered", "expected", "p50", "p99")}
                                   for p in result["phases"]],
                        "kib_per_socket": result["kib_per_socket"], "per_cpu_second": result["per_cpu_second"],
                        "open_seconds": result["open_seconds"], "closed": len(result["closed"]),
                    }), flush=True)
        finally:
            await deltas.producer.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--rates", default="10,20")
    args = parser.parse_args()
    asyncio.run(_run(args.rounds, tuple(int(x) for x in args.rates.split(","))))


if __name__ == "__main__":
    main()
