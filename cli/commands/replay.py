"""`svc replay`: re-append an exported log at N times the recorded speed (see ingest/replay.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cli.commands.ingest import (
    DatasetChoice, DatasetOpt, FileArg, StrictFlag, print_details, print_table, progress_bar, run_on_stack,
    strict_exit, summary_table,
)
from cli.common import DataDir, JsonFlag, print_json, settings_for

SpeedOpt = Annotated[str, typer.Option("--speed", help="N times the recorded speed, or max (as fast as possible)")]


def speed_of(text: str) -> float | None:
    from ingest.pacing import parse_speed

    try:
        return parse_speed(text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def register(app: typer.Typer) -> None:
    @app.command("replay")
    def replay(
        file: FileArg,
        speed: SpeedOpt = "max",
        dataset: DatasetOpt = DatasetChoice.live,
        as_json: JsonFlag = False,
        data_dir: DataDir = None,
        strict: StrictFlag = False,
    ) -> None:
        """Re-append an export (`svc export`): events keep their IDs, per-entity order and relative timing."""
        from ingest.event_log import open_event_log
        from ingest.replay import replay as run

        factor = speed_of(speed)
        settings = settings_for(data_dir)

        async def main():
            async with open_event_log(settings, dataset.value) as log:
                if as_json:
                    return await run(file, log, factor)
                with progress_bar(None, file.name) as bar:
                    task = bar.add_task("replay", total=None, events=0)
                    return await run(file, log, factor, lambda s: bar.update(
                        task, completed=s.accepted + s.duplicate, events=s.accepted + s.duplicate))

        summary = run_on_stack(main())
        if as_json:
            print_json(summary.public())
        else:
            print_table(summary_table(f"{Path(file).name} -> {dataset.value}", {file.name: summary}))
            print_details(summary)
        strict_exit(summary, strict)
