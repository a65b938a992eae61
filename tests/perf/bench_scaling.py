"""How cost grows (issue 26): a scaling table and plots (docs/bench_scaling.png), on this machine,
its cores, memory and load average printed with them.

1. Replay time against log length, and what the broker alone costs at that length (a plain
   consumer's append -> receipt p99 at 2,000 events/s at the head of the log): the season log of `bench_projections` (272 games, 8 books,
   3 markets, round after round) grown in place to 100,000 and 1,000,000 events, and to
   5,000,000 with `--scaling-5m` (the log alone takes ~10 min to append here); each length
   replayed from scratch through the rebuild path (`ScratchReplay`, as `svc projections
   rebuild|verify` run it). Baseline: raw aiokafka `getmany` of the same log in the same run.
2. append -> delta on `wire.deltas` p99 against events/s: one `svc projector run` at the head
   of an empty log, RATE_SECONDS at each rate from 500 up, doubling until the knee (the p99 ten
   times the first rate's, or more than 1% of the events not delivered within the run and
   5 s after it). Baseline: the first rate's p99.
3. REST p99 against stored seasons: 1, 2, 5, 10 and 20 NFL seasons of synthetic history
   (tests/perf/history.py: 272 games a season, two books on three markets each) projected by
   the real fold, then `svc`'s API app (granian, one worker, as bench_api serves it) under 64
   clients for REST_SECONDS per route: a page of the newest season's games, a page of games
   over every season, one market. Baseline: each route's p99 with one season.
Against log length (the sustained run) the figures are in `bench_projections` (pipeline_hours);
the Wire against sockets is bench_wire_fanout's.
"""

from __future__ import annotations

import asyncio
import os

import psutil

from infra.kafka import make_producer
from infra.topics import ensure_topics
from schemas.datasets import FEED_GAMES, WIRE_DELTAS, topic_name
from tests.perf.bench_projections import BOOKS, GAMES, Probe, _ends, _latencies, _load, _percentile, \
    _raw_consume, _replay, _send, _wait_for
from tests.perf.run import ROOT, BenchContext, Figure
from tests.support import projection_events as ev
from tests.support.projection_harness import start_projector
from tests.support import processes

PER_ROUND = GAMES * len(BOOKS) * 3  # 6,528 quotes a round
LENGTHS = (100_000, 1_000_000)
LONG = 5_000_000
RATES = (500, 1_000, 2_000, 4_000, 8_000, 16_000)
RATE_SECONDS = 15
BROKER_SECONDS = 10
KNEE_FACTOR = 10.0
PLOT = ROOT / "docs" / "bench_scaling.png"
SEASONS = (1, 2, 5, 10, 20)
REST_SECONDS = 5
KEY_SECRET = "bench-secret"


def machine() -> str:
    return (f"{os.cpu_count()} cores, {psutil.virtual_memory().total / 2**30:.0f} GiB memory; load average "
            + "/".join(f"{x:.1f}" for x in os.getloadavg()))


async def _grow(settings, have: int, rounds_done: int, want: int) -> tuple[int, int]:
    """Append whole rounds of quotes (the schedule first, on an empty log) until the log holds at
    least `want` events; (events now, rounds now)."""
    games = ev.schedule(GAMES)
    producer = make_producer(settings, linger_ms=20)
    await producer.start()
    try:
        if have == 0:
            await _send(producer, settings, games)
            have = len(games)
        while have < want:
            rounds = min(8, -(-(want - have) // PER_ROUND))
            quotes = ev.season_quotes(games, BOOKS, rounds, seed=rounds_done, first_minute=rounds_done,
                                      tag=f"r{rounds_done}")
            await _send(producer, settings, quotes)
            have += len(quotes)
            rounds_done += rounds
        return have, rounds_done
    finally:
        await producer.stop()


async def _broker_p99(ctx: BenchContext, settings, n: int) -> float:
    """append -> receipt p99 of a plain consumer at the head of the log, BROKER_SECONDS at
    2,000 events/s: what the embedded broker alone costs at this log length."""
    topic = topic_name("live", FEED_GAMES, settings.topic_namespace)
    probe = Probe(ctx.workdir / f"broker-{n}.json", "topic", "--bootstrap", settings.kafka_bootstrap, "--topic", topic)
    try:
        await probe.ready()
        await asyncio.sleep(1.0)
        sent = await _load(settings, ctx.workdir / f"broker-{n}-load.json", BROKER_SECONDS, 2_000, start=20_000_000 + n)
        await asyncio.sleep(2.0)
        seen = await probe.finish()
    finally:
        probe.kill()
    return _percentile(_latencies(sent, seen), 0.99)


async def _replay_curve(ctx: BenchContext, lengths) -> list[tuple[int, float, float, float]]:
    """(events, replay seconds, raw consume seconds, plain consumer p99 ms at 2,000/s) per log length."""
    settings = await ctx.fresh_settings()
    await ensure_topics(settings)
    have, rounds = 0, 0
    out = []
    for want in lengths:
        have, rounds = await _grow(settings, have, rounds, want)
        raw = await _raw_consume(settings, have)
        rate, applied, how = await _replay(settings)
        broker = await _broker_p99(ctx, settings, have)
        # the probe's load stays in the log
        have = sum((await _ends(settings, topic_name("live", FEED_GAMES, settings.topic_namespace))).values())
        out.append((applied, applied / rate, applied / raw, broker))
        print(f"   {applied:,} events: replay {applied / rate:.1f} s ({how}), raw consume {applied / raw:.1f} s, "
              f"plain consumer p99 at 2,000/s {broker:.1f} ms, load {os.getloadavg()[0]:.1f}", flush=True)
    return out


async def _rate_curve(ctx: BenchContext) -> list[tuple[int, float, float, float, int, int]]:
    """(rate, achieved events/s, delta p99 ms, read model p99 ms, sent, delivered) per rate, up to the knee."""
    settings = await ctx.fresh_settings()
    await ensure_topics(settings)
    topic = topic_name("live", FEED_GAMES, settings.topic_namespace)
    log = ctx.workdir / f"projector-rates-{settings.topic_namespace.strip('.')}.log"
    proc = start_projector(settings, log)
    out = []
    start = 0
    try:
        if await _wait_for(log, "resuming at the tracked offsets", 60) is None:
            raise RuntimeError("the projector did not hand over to faust: " + log.read_text()[-2000:])
        first = None
        for rate in RATES:
            probes = [
                Probe(ctx.workdir / f"rate-{rate}-deltas.json", "topic", "--bootstrap", settings.kafka_bootstrap,
                      "--topic", topic_name("live", WIRE_DELTAS, settings.topic_namespace), "--deltas"),
                Probe(ctx.workdir / f"rate-{rate}-tracking.json", "tracking", "--database-url", settings.database_url,
                      "--schema", "live", "--topic", topic),
            ]
            try:
                for probe in probes:
                    await probe.ready()
                await asyncio.sleep(1.0)
                sent = await _load(settings, ctx.workdir / f"rate-{rate}-load.json", RATE_SECONDS, rate, start=start)
                await asyncio.sleep(5.0)
                deltas, committed = [await probe.finish() for probe in probes]
            finally:
                for probe in probes:
                    probe.kill()
            start += len(sent) + 1
            d = _latencies(sent, deltas, by_ts=True)
            c = _latencies(sent, committed)
            achieved = len(sent) / max(1e-9, sent[-1][3] - sent[0][3])
            p99 = _percentile(d, 0.99) if d else float("inf")
            out.append((rate, achieved, p99, _percentile(c, 0.99) if c else float("inf"), len(sent), len(d)))
            print(f"   {rate}/s (achieved {achieved:,.0f}): delta p99 {p99:.1f} ms, {len(d):,} of {len(sent):,} "
                  f"delivered, load {os.getloadavg()[0]:.1f}", flush=True)
            first = first if first is not None else p99
            if p99 > KNEE_FACTOR * first or len(d) < 0.99 * len(sent) or achieved < 0.9 * rate:
                break
            # let a backlog drain before the next rate
            await asyncio.sleep(3.0)
    finally:
        processes.stop(proc, wait=30)
    return out


def _rest_load(url: str, header: str) -> dict:
    import shutil

    from tests.perf import bench_api

    load = bench_api._wrk if shutil.which("wrk") else bench_api._python_load
    load(url, 1, [header])  # warm-up
    result = load(url, REST_SECONDS, [header])
    if result["errors"]:
        raise RuntimeError(f"{result['errors']} error responses from {url}")
    return result


async def _rest_curve(ctx: BenchContext) -> list[tuple[int, int, dict[str, dict]]]:
    """(seasons, games stored, {route: load result}) per number of stored seasons."""
    import asyncpg

    from schemas.events import GameScheduled
    from schemas.natural_keys import market_id
    from tests.perf.history import LAST_SEASON, history
    from tests.support.api_fixtures import make_key
    from tests.support.live_server import api_server
    from tests.support.projection_harness import project

    out = []
    for n in SEASONS:
        settings = await ctx.fresh_settings(key_secret=KEY_SECRET)
        events = history(n)
        newest = next(e for e in reversed(events) if isinstance(e, GameScheduled))
        games = sum(isinstance(e, GameScheduled) for e in events)
        conn = await asyncpg.connect(settings.database_url)
        try:
            await project(settings, conn, events, "live")
            key = await make_key(settings.database_url, "bench", secret=KEY_SECRET)
        finally:
            await conn.close()
        routes = {
            "games, newest season": f"/v1/games?competition=nfl&season={LAST_SEASON}&limit=20",
            "games, every season": "/v1/games?competition=nfl&limit=20",
            "market": f"/v1/markets/{market_id(newest.game_id, 'game', 'spreads', 'full', None)}",
        }
        log = ctx.workdir / f"api-seasons-{n}.log"
        with api_server(settings.database_url, settings.data_dir, KEY_SECRET, log,
                        app="tests.perf.api_bench_app:app") as base:
            results = {name: await asyncio.to_thread(_rest_load, base + path, f"Authorization: Bearer {key}")
                       for name, path in routes.items()}
        out.append((n, games, results))
        print(f"   {n} seasons ({games:,} games): " + ", ".join(
            f"{name} p99 {r['p99_ms']:.1f} ms" for name, r in results.items()) + f", load {os.getloadavg()[0]:.1f}",
            flush=True)
    return out


def _plot(replays, rates, seasons) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, (left, broker, right, rest) = plt.subplots(1, 4, figsize=(20, 4))
    left.plot([r[0] for r in replays], [r[1] for r in replays], "o-", label="replay (rebuild path)")
    left.plot([r[0] for r in replays], [r[2] for r in replays], "s--", label="raw aiokafka getmany")
    broker.plot([r[0] for r in replays], [r[3] for r in replays], "o-", label="append -> plain consumer p99")
    broker.set(xlabel="events in the log", ylabel="ms", title="broker at 2,000 events/s against log length")
    broker.set_xscale("log")
    left.set(xlabel="events in the log", ylabel="seconds", title="replay time against log length")
    left.set_xscale("log")
    left.set_yscale("log")
    right.plot([r[1] for r in rates], [r[2] for r in rates], "o-", label="append -> delta p99")
    right.plot([r[1] for r in rates], [r[3] for r in rates], "s--", label="append -> read model p99")
    right.axhline(50, color="grey", linestyle=":", label="target 50 ms")
    right.set(xlabel="events/s achieved", ylabel="ms", title="live latency against rate")
    right.set_xscale("log")
    right.set_yscale("log")
    for name in (seasons[0][2] if seasons else {}):
        rest.plot([n for n, _, _ in seasons], [r[name]["p99_ms"] for _, _, r in seasons], "o-", label=name)
    rest.set(xlabel="stored seasons", ylabel="p99 (ms)", title="REST p99 against stored history")
    for ax in (left, broker, right, rest):
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.text(0.01, 0.01, f"{machine()}; one run, shared box", fontsize=7)
    fig.tight_layout()
    fig.savefig(PLOT, dpi=100)
    plt.close(fig)
    return True


async def run(ctx: BenchContext) -> list[Figure]:
    lengths = (*LENGTHS, LONG) if ctx.scaling_5m else LENGTHS
    replays = await _replay_curve(ctx, lengths)
    rates = await _rate_curve(ctx)
    seasons = await _rest_curve(ctx)
    where = machine()
    figures = []
    first_s = replays[0][1] / replays[0][0]
    for n, seconds, raw, _ in replays:
        figures.append(Figure(
            f"replay time, {n:,}-event season log", seconds, "s", "raw aiokafka getmany of the same log", raw, None,
            f"{n / seconds:,.0f} events/s; per event {seconds / n / first_s:.2f}x the shortest log's; {where}",
        ))
    for n, _, _, p99 in replays:
        figures.append(Figure(
            f"append -> plain consumer receipt p99 at 2,000 events/s, {n:,}-event log", p99, "ms",
            f"the same on the {replays[0][0]:,}-event log", replays[0][3], None,
            f"{BROKER_SECONDS} s at the head of the log (the broker alone, no projector); {where}",
        ))
    base = rates[0][2]
    for rate, achieved, d, c, sent, seen in rates:
        figures.append(Figure(
            f"append -> delta p99 at {rate:,} events/s offered", d, "ms", f"the same at {rates[0][0]} events/s", base,
            "<= 50 ms", f"{achieved:,.0f}/s achieved over {RATE_SECONDS} s; read model p99 {c:.1f} ms; "
            f"{seen:,} of {sent:,} delivered; {where}",
        ))
    for n, games, results in seasons:
        for name, r in results.items():
            first = seasons[0][2][name]
            figures.append(Figure(
                f"REST p99, {name}, {n} stored season{'s' if n > 1 else ''}", r["p99_ms"], "ms",
                "the same route with 1 season", first["p99_ms"], None,
                f"{games:,} games; {r['rate']:,.0f} req/s (1 season: {first['rate']:,.0f}); 64 clients, "
                f"{REST_SECONDS} s, granian 1 worker; {where}",
            ))
    drawn = _plot(replays, rates, seasons)
    figures.append(Figure("plots", 1.0 if drawn else 0.0, "", note=(
        f"docs/{PLOT.name}" if drawn else "matplotlib missing (`pip install -e '.[bench]'`): no plot")))
    return figures
