"""`make bench`: run every benchmark module against real parts and print ratio figures.

Each `tests/perf/bench_*.py` module defines `async def run(ctx: BenchContext) -> list[Figure]`.
Every figure is reported as a ratio over a baseline measured in the same run on the same parts
(for example replay rate over raw consume rate on the same broker). The table is printed and
written to docs/benchmarks.md together with the command that produced it.

    python -m tests.perf.run [--only NAME ...] [--pipeline-minutes N] [--scaling-5m] [--replay-only]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import pkgutil
import platform
import secrets
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import asyncpg

from infra.broker import start_broker
from infra.db import wait_for_database
from infra.migrate import migrate
from infra.postgres import database_url as embedded_url
from infra.postgres import start_postgres
from infra.settings import Settings, load_settings
from tests.support.processes import start_keeper

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Figure:
    name: str  # what was measured, e.g. "replay rate"
    value: float
    unit: str  # e.g. "events/s", "ms"
    baseline_name: str | None = None  # e.g. "raw aiokafka consume, same topic"
    baseline_value: float | None = None
    target: str | None = None  # e.g. ">= 0.25"
    note: str = ""

    @property
    def ratio(self) -> float | None:
        if not self.baseline_value:
            return None
        return self.value / self.baseline_value


@dataclass
class BenchContext:
    """Real parts for one benchmark: a broker, a Postgres server, and fresh settings."""

    bootstrap: str
    pg_server: str
    workdir: Path
    created: list[str] = field(default_factory=list)
    pipeline_minutes: float = 1.0  # the sustained pipeline run (tests/perf/pipeline_hours.py)
    scaling_5m: bool = False  # bench_scaling also replays a 5,000,000-event log
    replay_only: bool = False  # bench_projections stops after its replay figure (see `main`)

    async def fresh_settings(self, **overrides) -> Settings:
        """Own database (migrated) and own topic namespace on the shared broker."""
        name = f"svcbench_{secrets.token_hex(4)}"
        admin = await asyncpg.connect(self.pg_server)
        try:
            await admin.execute(f'CREATE DATABASE "{name}"')
        finally:
            await admin.close()
        self.created.append(name)
        url = self.pg_server.rsplit("/", 1)[0] + f"/{name}"
        conn = await asyncpg.connect(url)
        try:
            await migrate(conn)
        finally:
            await conn.close()
        values = dict(
            data_dir=self.workdir / name, kafka_bootstrap=self.bootstrap, database_url=url,
            topic_namespace=f"b{secrets.token_hex(3)}.", key_secret="bench-secret",
        )
        values.update(overrides)
        return load_settings(env={}, use_stack=False, **values)

    async def cleanup(self) -> None:
        admin = await asyncpg.connect(self.pg_server)
        try:
            for name in self.created:
                await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()


def _modules(only: list[str] | None) -> list[str]:
    names = [m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)]) if m.name.startswith("bench_")]
    if only:
        names = [n for n in names if any(o in n for o in only)]
    return sorted(names)


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:,.3f}" if abs(x) < 100 else f"{x:,.0f}"


def _table(results: dict[str, list[Figure]]) -> str:
    lines = [
        "| benchmark | figure | value | baseline | baseline value | ratio | target | note |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for module, figures in results.items():
        for f in figures:
            lines.append(
                f"| {module.removeprefix('bench_')} | {f.name} | {_fmt(f.value)} {f.unit} | {f.baseline_name or '-'} "
                f"| {_fmt(f.baseline_value)} | {_fmt(f.ratio)} | {f.target or '-'} | {f.note} |"
            )
    return "\n".join(lines)


@asynccontextmanager
async def bench_stack(prefix: str, **options) -> AsyncIterator[BenchContext]:
    """A broker and a database (DATABASE_URL's server, or an embedded one) in a fresh work dir,
    as a BenchContext; both stopped on the way out. `make bench` and the side probes share it."""
    workdir = Path(tempfile.mkdtemp(prefix=prefix))
    if os.environ.get("SVC_BENCH_BROKER") == "keeper":
        # what `svc up` runs: tansu behind the log keeper, whose children wait for new records
        # instead of polling (the projectors the benches start inherit this environment)
        broker, port = start_keeper(workdir / "kept", workdir / "keeper.log")
        os.environ["SVC_BROKER_LONG_POLL"] = "true"
    else:
        broker, port = start_broker(log_path=workdir / "tansu.log")
    pg_proc = None
    try:
        pg_server = os.environ.get("DATABASE_URL")
        if not pg_server:
            pg_proc, pg_port = start_postgres(workdir / "pg", durable=False)
            pg_server = embedded_url(pg_port)
        await wait_for_database(pg_server)
        ctx = BenchContext(bootstrap=f"127.0.0.1:{port}", pg_server=pg_server, workdir=workdir, **options)
        try:
            yield ctx
        finally:
            await ctx.cleanup()
    finally:
        broker.terminate()
        if pg_proc is not None:
            pg_proc.terminate()
            pg_proc.wait(30)


async def _main(only: list[str] | None, pipeline_minutes: float = 1.0, scaling_5m: bool = False,
                replay_only: bool = False) -> int:
    names = _modules(only)
    if not names:
        print("no benchmarks selected", file=sys.stderr)
        return 1
    results: dict[str, list[Figure]] = {}
    failed = False
    async with bench_stack("svc-bench-", pipeline_minutes=pipeline_minutes, scaling_5m=scaling_5m,
                           replay_only=replay_only) as ctx:
        for name in names:
            module = importlib.import_module(f"tests.perf.{name}")
            print(f"== {name}", flush=True)
            started = time.monotonic()
            try:
                results[name] = await module.run(ctx)
            except Exception as exc:  # report and go on: one broken bench must not hide the rest
                failed = True
                print(f"   FAILED: {exc!r}", flush=True)
                traceback.print_exc()  # where, not only what: a long bench is costly to run again
                results[name] = [Figure("failed", 0, "", note=repr(exc)[:120])]
            print(f"   done in {time.monotonic() - started:.1f}s", flush=True)
    print(_table(results))
    if replay_only:
        # a section of docs/benchmarks.md holds one whole run of its bench: a partial run would
        # replace the projections section's other figures with nothing
        print("--replay-only: docs/benchmarks.md left as it was", flush=True)
    else:
        _record(results, pipeline_minutes, scaling_5m)
    return 1 if failed else 0


def _command(name: str, pipeline_minutes: float, scaling_5m: bool) -> str:
    """The command that reproduces a section: the broker switch and the options of this run."""
    env = "SVC_BENCH_BROKER=keeper " if os.environ.get("SVC_BENCH_BROKER") == "keeper" else ""
    options = [f"--only {name.removeprefix('bench_')}"]
    if name == "bench_projections" and pipeline_minutes != 1.0:
        options.append(f"--pipeline-minutes {pipeline_minutes:g}")
    if name == "bench_scaling" and scaling_5m:
        options.append("--scaling-5m")
    plain = " (or plain `make bench`)" if not env and len(options) == 1 else ""
    return f"`{env}make bench ARGS=\"{' '.join(options)}\"`{plain}"


def _record(results: dict[str, list[Figure]], pipeline_minutes: float = 1.0, scaling_5m: bool = False) -> None:
    """Replace each run module's section of docs/benchmarks.md; keep the others as they were."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / (1 << 30)
    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    machine = (f"{platform.machine()}, {os.cpu_count()} cores, {memory:.0f} GiB memory, Python {platform.python_version()}; "
               f"load average (1/5/15 min) at the end {load}")
    out = ROOT / "docs" / "benchmarks.md"
    text = out.read_text() if out.exists() else (
        "# Benchmarks\n\n"
        "Produced by `make bench` (`python -m tests.perf.run`; one benchmark: `make bench ARGS=\"--only NAME\"`).\n"
        "Every figure is a ratio over a baseline measured in the same run on the same broker, database\n"
        "and machine. Targets come from the issues; a figure below its target is reported, not hidden.\n"
    )
    for name, figures in results.items():
        start, end = f"<!-- {name} -->", f"<!-- /{name} -->"
        section = (
            f"{start}\n## {name.removeprefix('bench_')}\n\n"
            f"- when: {stamp}; commit: {commit or 'uncommitted'}; machine: {machine}\n"
            f"- command: {_command(name, pipeline_minutes, scaling_5m)}\n\n"
            f"{_table({name: figures})}\n{end}"
        )
        if start in text and end in text:
            text = text[: text.index(start)] + section + text[text.index(end) + len(end):]
        else:
            text = text.rstrip("\n") + "\n\n" + section + "\n"
    out.parent.mkdir(exist_ok=True)
    out.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", help="run only benchmarks whose module name contains one of these")
    parser.add_argument("--pipeline-minutes", type=float, default=1.0,
                        help="length of the sustained 2,000 events/s run over the 1,000,000-event log in the "
                             "projections bench (default 1; the issue's run is 10)")
    parser.add_argument("--scaling-5m", action="store_true",
                        help="bench_scaling: replay a 5,000,000-event log too (its append alone takes ~10 min)")
    parser.add_argument("--replay-only", action="store_true",
                        help="bench_projections: the replay figure alone (season log, raw consume, replay), "
                             "without the catch-up, sustained, floor and live phases; prints the table and "
                             "leaves docs/benchmarks.md as it was")
    args = parser.parse_args()
    sys.exit(asyncio.run(_main(args.only, args.pipeline_minutes, args.scaling_5m, args.replay_only)))


if __name__ == "__main__":
    main()
