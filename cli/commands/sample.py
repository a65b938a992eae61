"""`svc sample load`: the sample files into `live`, the sandbox pre-game into `test`."""

from __future__ import annotations

from typing import Annotated

import typer

from cli.commands.ingest import console, err_console, print_table, run_on_stack, summary_table
from cli.common import DataDir, JsonFlag, print_json, settings_for


def register(app: typer.Typer) -> None:
    sample_app = typer.Typer(help="The sample data shipped in ingest/samples/.", no_args_is_help=True)
    app.add_typer(sample_app, name="sample")

    @sample_app.command("load")
    def load(
        as_json: JsonFlag = False,
        data_dir: DataDir = None,
        live: Annotated[bool, typer.Option("--live/--no-live", help="Load the sample files into live")] = True,
        test: Annotated[bool, typer.Option("--test/--no-test", help="Load the sandbox pre-game into test")] = True,
    ) -> None:
        """Ingest every sample file into live and the sandbox day's pre-game part into test.
        Idempotent (a second load appends nothing); exits when done."""
        from ingest.samples import load as load_samples

        settings = settings_for(data_dir)
        if as_json:
            results = run_on_stack(load_samples(settings, live, test))
            print_json({name: s.public() for name, s in results.items()})
            return
        with err_console.status("loading sample data") as status:
            results = run_on_stack(load_samples(
                settings, live, test, lambda name, s: status.update(f"{name}: {s.records} records, {s.events} events"),
            ))
        print_table(summary_table("sample data", results))
        for name, s in results.items():
            if s.reasons:
                for reason, count in s.reasons.most_common():
                    console.print(f"[yellow]{name}[/yellow]: dead-lettered {count} x {reason}")
