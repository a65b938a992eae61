"""`svc ingest ...`: read a source file into canonical events on a dataset's feed topics.

Also the helpers the other data commands (export, replay, sample, sandbox) share: the
dataset option, the progress bar and the summary table.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from datetime import datetime, timezone
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from domain.prices import QUOTE_FORMATS
from cli.common import DataDir, JsonFlag, console, err_console, fail, print_json, settings_for


class DatasetChoice(str, Enum):
    live = "live"
    test = "test"


# the formats a quote arrives in (domain/prices.py), or auto: inferred per market
PriceFormatChoice = Enum("PriceFormatChoice", {name: name for name in ("auto", *QUOTE_FORMATS)}, type=str)


DatasetOpt = Annotated[
    DatasetChoice, typer.Option("--dataset", help="live (the ingested feeds) or test (the sandbox)"),
]
FileArg = Annotated[Path, typer.Argument(exists=True, dir_okay=False, readable=True, help="The source file")]
StrictFlag = Annotated[bool, typer.Option(
    "--strict", help="Exit 3 when any record was dead-lettered (the run still completes and reports)")]
# exit codes: 0 the run completed (dead letters or not); 1 it could not complete (nothing is
# lost: run it again, what was appended is not sent twice); 2 a usage error; 3 --strict and
# at least one record was dead-lettered
EXIT_DEAD_LETTERS = 3


def stack_errors() -> tuple[type[BaseException], ...]:
    """Errors that mean the broker or the database failed a run (or is not configured)."""
    from aiokafka.errors import KafkaError
    from asyncpg import PostgresError

    return (RuntimeError, OSError, KafkaError, PostgresError)


def run_on_stack(coro):
    """Run a command's coroutine; a failure to reach (or keep) the broker or the database is
    an error exit (1), never a summary with exit 0."""
    from aiokafka.errors import KafkaConnectionError

    from infra.db import DATABASE_DOWN
    from infra.log_epoch import EpochChanged

    try:
        return asyncio.run(coro)
    except EpochChanged as exc:
        fail(str(exc))
    except (*DATABASE_DOWN, RuntimeError, KafkaConnectionError) as exc:
        fail(f"{type(exc).__name__}: {exc} (is the stack running? `svc up`, or set KAFKA_BOOTSTRAP and DATABASE_URL)")
    except stack_errors() as exc:
        fail(f"{type(exc).__name__}: {exc} (the run did not complete; running it again resumes it: "
             "what was appended is not sent twice)")


def strict_exit(summary, strict: bool) -> None:
    """`--strict`: a completed run with dead letters exits 3."""
    if strict and summary.dead_lettered:
        fail(f"{summary.dead_lettered} dead-lettered (--strict); `svc ingest dead-letters` lists them",
             EXIT_DEAD_LETTERS)


def progress_bar(total: int | None, label: str) -> Progress:
    return Progress(
        TextColumn(f"[bold]{label}[/bold]"), BarColumn(), MofNCompleteColumn(),
        TextColumn("{task.fields[events]} events"), TimeElapsedColumn(),
        console=err_console, transient=False,
    )


def summary_table(title: str, rows: dict) -> Table:
    """One row per run: the six summary counts (and the seconds it took)."""
    table = Table(title=title, title_justify="left")
    table.add_column("", overflow="fold")  # run names are long file names: wrap, never cut
    for column in ("records", "dead-lettered", "events", "accepted", "duplicate", "events/s"):
        table.add_column(column, justify="right", no_wrap=True)
    for name, s in rows.items():
        table.add_row(name, str(s.records), str(s.dead_lettered), str(s.events), str(s.accepted), str(s.duplicate),
                      f"{s.events_per_second:,.0f}")
    return table


def print_table(table: Table) -> None:
    """A table, full width in a log file too (rich assumes 80 columns when not on a terminal)."""
    (console if console.is_terminal else Console(width=160)).print(table)


def print_details(summary) -> None:
    if summary.by_type:
        console.print("events: " + ", ".join(f"{k} {v}" for k, v in sorted(summary.by_type.items())))
    for reason, count in summary.reasons.most_common():
        console.print(f"[yellow]dead-lettered[/yellow] {count} x {reason}")


def run_ingest(
    parse: Callable, path: Path, dataset: DatasetChoice, as_json: bool, data_dir: Path | None, strict: bool = False,
    **options,
) -> None:
    from ingest.event_log import open_event_log
    from ingest.pipeline import ingest
    from ingest.records import FormatError

    settings = settings_for(data_dir)
    try:
        parsed = parse(path, datetime.now(timezone.utc), **options)
    except FormatError as exc:
        fail(str(exc))

    async def main():
        async with open_event_log(settings, dataset.value) as log:
            if as_json:
                return await ingest(parsed, log)
            with progress_bar(parsed.total, path.name) as bar:
                task = bar.add_task("ingest", total=parsed.total, events=0)
                summary = await ingest(parsed, log, lambda s: bar.update(task, completed=s.records, events=s.events))
                bar.update(task, completed=parsed.total)
                return summary

    summary = run_on_stack(main())
    if as_json:
        print_json(summary.public())
    else:
        print_table(summary_table(f"{path.name} -> {dataset.value}", {path.name: summary}))
        print_details(summary)
    strict_exit(summary, strict)


# the feeds read from one file by an adapter with no option of its own: command, module under
# ingest/, help (odds-api has its own command below: it takes --price-format)
FILE_FEEDS = (
    ("nflverse-games", "nflverse_games", "nflverse schedules and results (games.csv): teams, games, finals, closing lines."),
    ("nflverse-player-stats", "nflverse_player_stats",
     "nflverse weekly player stats: players and per-game stat lines (ingest the games first)."),
    ("nflverse-injuries", "nflverse_injuries", "nflverse weekly injury reports: players and their reports."),
)


def _file_feed_command(module: str) -> Callable[..., None]:
    """The `svc ingest <feed> FILE` command of one of FILE_FEEDS (the adapter imported when run,
    so `svc --help` does not load every parser)."""

    def command(
        file: FileArg, dataset: DatasetOpt = DatasetChoice.live, as_json: JsonFlag = False, data_dir: DataDir = None,
        strict: StrictFlag = False,
    ) -> None:
        adapter = importlib.import_module(f"ingest.{module}")
        run_ingest(adapter.parse, file, dataset, as_json, data_dir, strict)

    return command


def register(app: typer.Typer) -> None:
    ingest_app = typer.Typer(
        help="Read a source file into canonical events on the feed topics (idempotent: a second run adds nothing).",
        no_args_is_help=True,
    )
    app.add_typer(ingest_app, name="ingest")

    for name, module, doc in FILE_FEEDS:
        ingest_app.command(name, help=doc)(_file_feed_command(module))

    @ingest_app.command("odds-api")
    def odds_api(
        file: FileArg, dataset: DatasetOpt = DatasetChoice.live, as_json: JsonFlag = False, data_dir: DataDir = None,
        strict: StrictFlag = False,
        price_format: Annotated[
            PriceFormatChoice, typer.Option("--price-format", help="The oddsFormat the response was requested in")
        ] = PriceFormatChoice.auto,
    ) -> None:
        """The Odds API v4 odds response (a list of events, or the historical wrapper)."""
        from ingest import odds_api as adapter

        run_ingest(adapter.parse, file, dataset, as_json, data_dir, strict, price_format=price_format.value)

    @ingest_app.command("reference")
    def reference(
        directory: Annotated[
            Path | None,
            typer.Argument(exists=True, file_okay=False, readable=True,
                           help="The library root (a folder per kind); default: the library shipped with svc"),
        ] = None,
        dataset: DatasetOpt = DatasetChoice.live, as_json: JsonFlag = False, data_dir: DataDir = None,
    ) -> None:
        """The reference library: each <kind>/<slug>.md file into reference.published, .revised or
        .retired events (only what changed; a file that does not validate is dead-lettered)."""
        from ingest.library import ingest_library, library_root

        root = directory or library_root()
        _ingest_content([(f"{root.name} -> {dataset.value}", root, ingest_library, dataset)], as_json, data_dir)

    @ingest_app.command("strategies")
    def strategies(
        directory: Annotated[
            Path | None,
            typer.Argument(exists=True, file_okay=False, readable=True,
                           help="The registry root (holding strategies/ and recipes/); default: the registry shipped with svc"),
        ] = None,
        dataset: DatasetOpt = DatasetChoice.live, as_json: JsonFlag = False, data_dir: DataDir = None,
    ) -> None:
        """The strategy registry: each strategies/<family>/<slug>.toml and recipes/<chain>.toml file into
        strategy.* and recipe.* events (only what changed; a file that does not validate is dead-lettered)."""
        from ingest.strategies import ingest_registry, registry_root

        root = directory or registry_root()
        _ingest_content([(f"{root.name} -> {dataset.value}", root, ingest_registry, dataset)], as_json, data_dir)

    @ingest_app.command("content")
    def content(as_json: JsonFlag = False, data_dir: DataDir = None) -> None:
        """The service's own content, shipped with svc: the reference library and the strategy registry,
        into both datasets (what `svc up --no-sample` loads). The same runs as `svc ingest reference` and
        `svc ingest strategies` for each dataset, in one process."""
        from ingest.library import ingest_library, library_root
        from ingest.strategies import ingest_registry, registry_root

        _ingest_content([(f"{kind} -> {dataset.value}", root, ingest, dataset) for dataset in DatasetChoice
                         for kind, root, ingest in (("reference", library_root(), ingest_library),
                                                    ("strategies", registry_root(), ingest_registry))],
                        as_json, data_dir)

    @ingest_app.command("dead-letters")
    def dead_letters(
        dataset: DatasetOpt = DatasetChoice.live, as_json: JsonFlag = False, data_dir: DataDir = None,
        limit: Annotated[int, typer.Option("--limit", help="Show at most this many (newest last)")] = 50,
    ) -> None:
        """List the dataset's dead letters: file, location and reason of each rejected record."""
        from ingest.deadletters import read_dead_letters

        settings = settings_for(data_dir)
        letters = run_on_stack(read_dead_letters(settings, dataset.value))
        shown = letters[-limit:] if limit > 0 else letters
        if as_json:
            print_json({"count": len(letters), "dead_letters": [
                {"source": d.source, "file": d.file, "location": d.location, "reason": d.reason, "raw": d.raw}
                for d in shown
            ]})
            return
        table = Table(title=f"{len(letters)} dead letters in {dataset.value}", title_justify="left")
        for column in ("file", "location", "reason"):
            table.add_column(column)
        for d in shown:
            table.add_row(d.file, d.location, d.reason)
        print_table(table)


def _ingest_content(runs: list[tuple[str, Path, Callable, DatasetChoice]], as_json: bool, data_dir) -> None:
    """Folders of content files (the reference library, the strategy registry) into the log:
    each `(title, root, ingest, dataset)` a run of its own, `ingest(root, log, settings)` turning
    what changed into events; the summary as every ingest (one row, or one JSON object, per run)."""
    from ingest.event_log import open_event_log

    settings = settings_for(data_dir)

    async def one(root, ingest, dataset):
        async with open_event_log(settings, dataset.value) as log:
            return await ingest(root, log, settings)

    async def main():
        # concurrent, as the processes of one run each were before `svc ingest content`
        return await asyncio.gather(*(one(root, ingest, dataset) for _, root, ingest, dataset in runs))

    summaries = dict(zip((title for title, *_ in runs), run_on_stack(main())))
    if len(runs) == 1:
        ((title, summary),) = summaries.items()
        if as_json:
            print_json(summary.public())
            return
        print_table(summary_table(title, {runs[0][1].name: summary}))
        print_details(summary)
        return
    if as_json:
        print_json({title: summary.public() for title, summary in summaries.items()})
        return
    print_table(summary_table("content", summaries))
    for title, summary in summaries.items():
        for reason, count in summary.reasons.most_common():
            console.print(f"[yellow]{title}[/yellow]: dead-lettered {count} x {reason}")
