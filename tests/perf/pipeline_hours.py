"""The projector over a long log and a long run (issue 26, targets 2 and 5), on the season log
`bench_projections` has just appended (1,005,584 events):

1. Memory over a 1,000,000-event catch-up: `svc projector run` (its own process, as the
   supervisor starts it) starts on the whole log with an empty schema and catches up through
   the bulk path; its RSS (psutil, the process and any children) is sampled every 0.1 s with
   the offsets its tracking rows have committed, and read at every 10% of the log. Figure:
   RSS at 100% of the log over RSS at 10% (flat is 1.0).
2. The sustained run: the same projector, at the head of that log, under 2,000 events/s for
   `--pipeline-minutes` minutes (default 1; the issue's run is 10:
   `make bench ARGS="--only projections --pipeline-minutes 10"`): append -> delta on
   `wire.deltas` and append -> committed read model, p99 per minute, with the projector's RSS
   at the end of each minute. Baseline of each minute: the first minute of the same run, so
   the ratio is how far the pipeline has bent since it started.
"""

from __future__ import annotations

import asyncio
import time

import psutil

from infra.db import connect
from schemas.datasets import FEED_GAMES, WIRE_DELTAS, topic_name
from tests.perf.run import BenchContext, Figure
from tests.support.projection_harness import caught_up, start_projector
from tests.support import processes

STEPS = 10  # RSS read at every tenth of the log
SAMPLE_EVERY = 0.1  # s
RATE = 2_000  # events/s, the sustained load
DEFAULT_MINUTES = 1.0
MiB = 1 << 20


def _rss(pid: int) -> int:
    """Resident bytes of the process and its children (0 once it is gone)."""
    try:
        p = psutil.Process(pid)
        return p.memory_info().rss + sum(c.memory_info().rss for c in p.children(recursive=True))
    except psutil.Error:
        return 0


async def _applied(conn, topic: str) -> int:
    rows = await conn.fetch("SELECT last_offset FROM live.tracking WHERE topic = $1", topic)
    return sum(r["last_offset"] + 1 for r in rows)


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def catch_up_memory(ctx: BenchContext, settings, total: int):
    """Start the projector on the whole log; (figures, the running projector, per-step samples)."""
    topic = topic_name("live", FEED_GAMES, settings.topic_namespace)
    log = ctx.workdir / f"projector-long-{settings.topic_namespace.strip('.')}.log"
    proc = start_projector(settings, log)
    samples: list[tuple[int, int, float]] = []  # (records applied, rss, seconds since start)
    conn = await connect(settings.database_url)
    try:
        started = time.perf_counter()
        applied = 0
        while applied < total:
            if proc.poll() is not None:
                raise RuntimeError("the projector exited during its catch-up: " + log.read_text()[-2000:])
            if time.perf_counter() - started > 1800:
                raise RuntimeError(f"the projector caught up {applied:,} of {total:,} records in 30 min")
            applied = await _applied(conn, topic)
            samples.append((applied, _rss(proc.pid), time.perf_counter() - started))
            await asyncio.sleep(SAMPLE_EVERY)
        elapsed = time.perf_counter() - started
    except BaseException:
        proc.kill()
        raise
    finally:
        await conn.close()
    steps = []  # (share of the log, records applied, rss) at the first sample past each tenth
    for k in range(1, STEPS + 1):
        at = next(s for s in samples if s[0] >= total * k // STEPS)
        steps.append((k / STEPS, at[0], at[1]))
    peak = max(s[1] for s in samples)
    first, last = steps[0][2], steps[-1][2]
    trail = ", ".join(f"{int(share * 100)}%: {rss / MiB:.0f}" for share, _, rss in steps)
    figures = [Figure(
        f"projector RSS after catching up a {total:,}-event log (svc projector run, empty schema)", last / MiB, "MiB",
        "its RSS at 10% of the log", first / MiB, "flat (~1.0)",
        f"{total:,} records in {elapsed:.0f} s ({total / elapsed:,.0f}/s); RSS in MiB at each tenth: {trail}; "
        f"peak {peak / MiB:.0f}; load average {_load()}",
    )]
    return figures, proc, steps, log


async def _log_size(settings) -> int:
    from tests.perf.bench_projections import _ends

    return sum((await _ends(settings, topic_name("live", FEED_GAMES, settings.topic_namespace))).values())


def _load() -> str:
    import os

    return "/".join(f"{x:.1f}" for x in os.getloadavg())


async def sustained(ctx: BenchContext, settings, proc, log, minutes: float) -> list[Figure]:
    """2,000 events/s for `minutes` through the running projector, p99 per minute."""
    from tests.perf.bench_projections import Probe, _latencies, _load as run_load

    if not await caught_up(settings, 300, datasets=("live",)):
        raise RuntimeError("the projector did not drain its outbox after the catch-up")
    topic = topic_name("live", FEED_GAMES, settings.topic_namespace)
    probes = [
        Probe(ctx.workdir / "long-deltas.json", "topic", "--bootstrap", settings.kafka_bootstrap, "--topic",
              topic_name("live", WIRE_DELTAS, settings.topic_namespace), "--deltas"),
        Probe(ctx.workdir / "long-tracking.json", "tracking", "--database-url", settings.database_url, "--schema",
              "live", "--topic", topic),
    ]
    rss: list[tuple[float, int]] = []
    loads: list[tuple[float, float]] = []
    stop = asyncio.Event()

    exited: list[float] = []  # when the projector was seen gone

    async def watch() -> None:
        import os

        while not stop.is_set():
            if not exited and proc.poll() is not None:
                exited.append(time.perf_counter())
            rss.append((time.perf_counter(), _rss(proc.pid)))
            loads.append((time.perf_counter(), os.getloadavg()[0]))
            try:
                await asyncio.wait_for(stop.wait(), 1.0)
            except asyncio.TimeoutError:
                pass

    try:
        for probe in probes:
            await probe.ready()
        await asyncio.sleep(1.0)
        watcher = asyncio.create_task(watch())
        seconds = minutes * 60
        sent = await run_load(settings, ctx.workdir / "long-load.json", seconds, RATE, start=10_000_000)
        # a projector that fell behind works off its backlog: those events count late, not never
        drained = proc.poll() is None and await caught_up(settings, 300, datasets=("live",))
        await asyncio.sleep(2.0)
        stop.set()
        await watcher
        delta_seen, committed = [await probe.finish() for probe in probes]
    finally:
        for probe in probes:
            probe.kill()
        processes.stop(proc, wait=30)
    first_at = sent[0][3]
    span = max(1, int(-(-(sent[-1][3] - first_at) // 60)))  # minutes, rounded up
    figures = []
    total = (await _log_size(settings)) - len(sent)
    whole_delta = _latencies(sent, delta_seen, by_ts=True)
    whole_commit = _latencies(sent, committed)
    achieved = len(sent) / max(1e-9, sent[-1][3] - first_at)
    gone = ""
    # how often the live path fell SVC_LIVE_FAR_BEHIND behind and the bulk path took over (runner.keep_up)
    handed = log.read_text().count("handing it to the bulk path") if log.exists() else 0
    if exited:
        why = [line for line in log.read_text().splitlines() if "ERROR" in line][-1:] if log.exists() else []
        gone = (f"; THE PROJECTOR EXITED {(exited[0] - first_at) / 60:.1f} min into the run"
                + (f" ({why[0][:160]})" if why else "") + ", so later events were never delivered")
    figures.append(Figure(
        f"sustained {minutes:g} min at {RATE}/s on a {total:,}-event log: append -> delta on wire.deltas, p99 "
        "over the whole run", _percentile(whole_delta, 0.99), "ms", "append -> committed read model p99, same run",
        _percentile(whole_commit, 0.99), "p99 <= 50 ms",
        f"{len(sent):,} events sent ({achieved:,.0f}/s achieved), {len(whole_delta):,} deltas and "
        f"{len(whole_commit):,} commits seen (p99 over those seen){'' if drained else '; the backlog was not worked off'}"
        f"; the live path handed to the bulk path {handed} times{gone}; per minute below; load average {_load()}",
    ))
    base = None
    for m in range(span):
        part = [e for e in sent if m * 60 <= e[3] - first_at < (m + 1) * 60]
        if not part:
            continue
        seen = _latencies(part, delta_seen, by_ts=True)
        d = _percentile(seen, 0.99)
        c = _percentile(_latencies(part, committed), 0.99)
        end = first_at + (m + 1) * 60
        size = next((r for t, r in rss if t >= end), rss[-1][1] if rss else 0)
        load = max((x for t, x in loads if first_at + m * 60 <= t < end), default=float("nan"))
        if base is None:
            base = d
        figures.append(Figure(
            f"sustained, minute {m + 1}: append -> delta p99", d, "ms", "minute 1 of the same run", base,
            "<= 50 ms", f"{len(seen):,} of {len(part):,} events' deltas seen; append -> committed read model p99 "
            f"{c:.1f} ms; projector RSS "
            f"{size / MiB:.0f} MiB at the minute's end; 1-min load average up to {load:.1f}",
        ))
    return figures
