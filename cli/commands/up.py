"""`svc up`: run the whole stack on the embedded default, in the foreground until Ctrl-C."""

from __future__ import annotations

from typing import Annotated

import typer

from cli.common import DataDir, settings_for


def register(app: typer.Typer) -> None:
    @app.command("up")
    def up(
        port: Annotated[int, typer.Option("--port", envvar="SVC_PORT", help="API port")] = 8000,
        data_dir: DataDir = None,
        no_sample: Annotated[bool, typer.Option("--no-sample", help="Start without loading sample data")] = False,
    ) -> None:
        """Start broker, Postgres, projector and API (embedded unless KAFKA_BOOTSTRAP/DATABASE_URL are set)."""
        from infra.logs import configure_logging
        from infra.supervisor import Supervisor

        # the stack record of a previous run is not an input here: `up` starts parts anew
        settings = settings_for(data_dir, port=port, use_stack=False)
        configure_logging(settings, "supervisor")
        raise typer.Exit(Supervisor(settings, sample=not no_sample).run())
