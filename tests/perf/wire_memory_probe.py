"""Where an open, subscribed, idle Wire socket's bytes are: bench_wire_fanout's 2,000 clients (its
slate, its keys, its loopback addresses) opened against one API process twice (first round: a
fresh process; second: the same process, warm), with RSS and tracemalloc snapshots of the API
process while they are open, and the same two rounds against the bare `websockets` baseline.

    .venv/bin/python -m tests.perf.wire_memory_probe [--sockets 2000] [--trace] [--top 25]

Not part of `make bench`. --trace starts the API process with tracemalloc (25 frames; slower, RSS
then includes tracemalloc's own tables, so RSS figures are read from runs without it); the
probe prints the top allocation sites grown between "before" and "open" of each round.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path


def __getattr__(name: str):
    """`tests.perf.wire_memory_probe:traced_app`: the bench app, tracemalloc on, SIGUSR1 writes a
    snapshot to $SVC_PROBE_SNAPSHOTS/<n>.snap."""
    if name == "traced_app":
        out = Path(os.environ["SVC_PROBE_SNAPSHOTS"])
        taken = [0]

        def dump(*_):
            import gc
            gc.collect()
            taken[0] += 1
            tracemalloc.take_snapshot().dump(str(out / f"{taken[0]}.snap"))
            (out / f"{taken[0]}.done").write_text("")

        def start():  # after the imports and the app's build: tracing them made start-up exceed a minute
            tracemalloc.start(int(os.environ.get("SVC_PROBE_FRAMES", "8")))
            signal.signal(signal.SIGUSR1, dump)

        from tests.perf.api_bench_app import app
        app.app.on_startup.append(start)
        return app
    raise AttributeError(name)


async def _round(fan, ctx, label, url, api, pids, plan_rows, snapdir: Path | None, snap_no: list[int]):
    """One round of `bench_wire_fanout.open_idle`, with tracemalloc snapshots before and while open."""

    async def snapshot() -> str | None:
        if snapdir is None:
            return None
        snap_no[0] += 1
        os.kill(pids[0], signal.SIGUSR1)
        done = snapdir / f"{snap_no[0]}.done"
        while not done.exists():
            await asyncio.sleep(0.2)
        return str(snapdir / f"{snap_no[0]}.snap")

    snaps = []

    async def while_open() -> None:
        snaps.append(await snapshot())

    await asyncio.sleep(1)
    snaps.append(await snapshot())
    result = await fan.open_idle(ctx, label, url, api, pids, plan_rows, while_open)
    return {"label": label, **result, "snaps": tuple(snaps)}


def _top(snaps: tuple[str, str], n: int, sockets: int) -> None:
    a, b = (tracemalloc.Snapshot.load(s) for s in snaps)
    filters = [tracemalloc.Filter(False, tracemalloc.__file__)]
    a, b = a.filter_traces(filters), b.filter_traces(filters)
    total = sum(s.size_diff for s in b.compare_to(a, "filename"))
    print(f"   traced growth {total / 1024 / sockets:.2f} KiB a socket", flush=True)
    for stat in b.compare_to(a, "traceback")[:n]:
        frames = [f"{f.filename.split('site-packages/')[-1].replace(str(Path.cwd()) + '/', '')}:{f.lineno}"
                  for f in stat.traceback[-6:]]
        print(f"   {stat.size_diff / sockets:8.0f} B/socket {stat.count_diff / sockets:6.2f} obj/socket  "
              f"{' < '.join(reversed(frames))}", flush=True)


async def _run(args) -> None:
    from tests.perf import bench_wire_fanout as fan
    from tests.perf.run import bench_stack
    from tests.support.live_server import api_process
    from tests.support.processes import stop
    from infra.net import free_port

    async with bench_stack("svc-memprobe-") as ctx:
        settings, _, plan_rows = await fan.prepare(ctx, args.sockets, "mem")
        topics = {t for row in plan_rows for t in row["topics"]}
        print(json.dumps({"sockets": args.sockets, "topics": len(topics), "per_socket_topics": len(plan_rows[0]["topics"]),
                          "load": os.getloadavg(), "utc": time.strftime("%H:%M:%S", time.gmtime())}), flush=True)
        env = {"KAFKA_BOOTSTRAP": settings.kafka_bootstrap, "SVC_TOPIC_NAMESPACE": settings.topic_namespace}
        snapdir = None
        app = "tests.perf.api_bench_app:app"
        if args.trace:
            snapdir = ctx.workdir / "snaps"
            snapdir.mkdir()
            env["SVC_PROBE_SNAPSHOTS"] = str(snapdir)
            app = "tests.perf.wire_memory_probe:traced_app"
        snap_no = [0]
        with api_process(settings.database_url, settings.data_dir, fan.KEY_SECRET, ctx.workdir / "probe-api.log",
                         app=app, **env) as (base, proc):
            for r in ("first", "second"):
                result = await _round(fan, ctx, f"api-{r}", fan._ws(base), base, [proc.pid], plan_rows, snapdir, snap_no)
                print(json.dumps({k: v for k, v in result.items() if k != "snaps"}), flush=True)
                if args.trace:
                    _top(result["snaps"], args.top, args.sockets)
        if args.no_baseline:
            return
        port = free_port()
        baseline = subprocess.Popen(
            [sys.executable, "-m", "tests.perf.wire_baseline", "--bootstrap", settings.kafka_bootstrap, "--topic",
             fan.topic_name("live", fan.WIRE_DELTAS, settings.topic_namespace), "--port", str(port)], cwd=fan.ROOT,
            stdout=subprocess.PIPE, stderr=open(ctx.workdir / "probe-baseline.log", "wb"))
        try:
            line = await asyncio.wait_for(asyncio.to_thread(baseline.stdout.readline), 60)
            if not line.startswith(b"ready"):
                raise RuntimeError("baseline server did not start")
            for r in ("first", "second"):
                result = await _round(fan, ctx, f"baseline-{r}", f"ws://127.0.0.1:{port}", None, [baseline.pid],
                                      plan_rows, None, snap_no)
                print(json.dumps({k: v for k, v in result.items() if k != "snaps"}), flush=True)
        finally:
            stop(baseline)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sockets", type=int, default=2000)
    parser.add_argument("--trace", action="store_true")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--top", type=int, default=25)
    asyncio.run(_run(parser.parse_args()))


if __name__ == "__main__":
    main()
