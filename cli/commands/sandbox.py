"""`svc sandbox play`: play the sandbox day's in-game part into the `test` dataset."""

from __future__ import annotations

from typing import Annotated

import typer

from cli.commands.ingest import err_console, print_details, print_table, run_on_stack, summary_table
from cli.commands.replay import speed_of
from cli.common import DataDir, JsonFlag, print_json, settings_for


def register(app: typer.Typer) -> None:
    sandbox_app = typer.Typer(help="The sandbox day (dataset test): 2024-09-08, NFL week 1, played on the wall clock.", no_args_is_help=True)
    app.add_typer(sandbox_app, name="sandbox")

    @sandbox_app.command("play")
    def play(
        speed: Annotated[
            str | None, typer.Option("--speed", help="N times real speed or max [default: settings.sandbox_speed]")
        ] = None,
        as_json: JsonFlag = False,
        data_dir: DataDir = None,
    ) -> None:
        """Play the day's games (and their price moves) on the sandbox clock: the day starts now and
        runs N times faster; exits when the day is over. Resumes a stopped run on its own clock;
        a finished day is played again from its start."""
        from ingest.sandbox.play import play as run
        from ingest.samples import SAMPLES

        settings = settings_for(data_dir)
        factor = speed_of(speed if speed is not None else str(settings.sandbox_speed))
        if as_json:
            summary = run_on_stack(run(settings, SAMPLES, factor))
            print_json(summary.public())
            return
        label = "as fast as possible" if factor is None else f"at {factor:g}x"
        with err_console.status(f"playing the sandbox day {label}") as status:
            summary = run_on_stack(run(settings, SAMPLES, factor, lambda s, at: status.update(
                f"sandbox day {label}: {at:%Y-%m-%d %H:%M} UTC, {s.accepted} events appended")))
        print_table(summary_table("sandbox day (in-game part) -> test", {"in-game": summary}))
        print_details(summary)
