"""`svc projector run`, `svc projections rebuild`, `svc projections verify`."""

from __future__ import annotations

import logging
from typing import Annotated

import typer

from cli.common import DataDir, JsonFlag, console, err_console, print_json, run, settings_for

DatasetOption = Annotated[
    list[str] | None,
    typer.Option("--dataset", "-d", help="live or test (repeatable) [default: both]", show_default=False),
]


def _datasets(values: list[str] | None) -> tuple:
    from schemas.datasets import DATASETS

    chosen = tuple(values or DATASETS)
    unknown = [d for d in chosen if d not in DATASETS]
    if unknown:
        raise typer.BadParameter(f"unknown dataset(s): {', '.join(unknown)}; expected live or test")
    return chosen


def _logging(settings, process: str) -> None:
    from infra.logs import configure_logging

    configure_logging(settings, process)
    logging.getLogger("projections").setLevel(settings.log_level.upper())
    # faust's services (mode) log their start and stop under the module of their class: our
    # transport's consumer classes live in projections/faust_adapter.py
    logging.getLogger("projections.faust_adapter").setLevel(logging.WARNING)


async def _connections(settings, n: int):
    from infra.db import connect, wait_for_database

    url = settings.require_database()
    await wait_for_database(url, timeout=60)
    return [await connect(url) for _ in range(n)]


def register(app: typer.Typer) -> None:
    projector = typer.Typer(help="The projector: feed topics -> read models and Wire deltas.", no_args_is_help=True)
    projections = typer.Typer(help="Rebuild or verify the read models from the log.", no_args_is_help=True)
    app.add_typer(projector, name="projector")
    app.add_typer(projections, name="projections")

    @projector.command("run")
    def projector_run(data_dir: DataDir = None) -> None:
        """Run the projector of both datasets until SIGTERM (what `svc up` starts)."""
        from projections.runner import run_projector

        settings = settings_for(data_dir)
        _logging(settings, "projector")
        raise typer.Exit(run_projector(settings))

    @projections.command("rebuild")
    def projections_rebuild(data_dir: DataDir = None, dataset: DatasetOption = None, as_json: JsonFlag = False) -> None:
        """Replay the log from offset 0 into fresh tables and swap them in atomically."""
        from projections.rebuild import rebuild

        settings = settings_for(data_dir)
        _logging(settings, "rebuild")

        async def go():
            conn, lock_conn = await _connections(settings, 2)
            try:
                return [await rebuild(settings, d, conn, lock_conn) for d in _datasets(dataset)]
            finally:
                await conn.close()
                await lock_conn.close()

        results = run(go())
        if as_json:
            print_json([r.__dict__ for r in results])
            return
        for r in results:
            console.print(
                f"{r.dataset}: rebuilt from {r.records} records and swapped in (generation {r.generation})"
                + ("; the log was new, its deltas were published" if r.epoch_changed else "")
            )

    @projections.command("verify")
    def projections_verify(data_dir: DataDir = None, dataset: DatasetOption = None, as_json: JsonFlag = False) -> None:
        """Rebuild into a scratch schema and compare every row and topic seq with the live read models."""
        from projections.rebuild import verify

        settings = settings_for(data_dir)
        _logging(settings, "verify")

        async def go():
            conn, lock_conn, snapshot_conn = await _connections(settings, 3)
            try:
                return [await verify(settings, d, conn, lock_conn, snapshot_conn) for d in _datasets(dataset)]
            finally:
                for c in (conn, lock_conn, snapshot_conn):
                    await c.close()

        results = run(go())
        identical = all(r.identical for r in results)
        if as_json:
            print_json({"identical": identical, "datasets": [
                {"dataset": r.dataset, "records": r.records, "differences": r.differences} for r in results
            ]})
        elif identical:
            console.print("identical")
        else:
            for r in results:
                for line in r.differences:
                    err_console.print(f"{r.dataset}: {line}")
        if not identical:
            raise typer.Exit(1)
