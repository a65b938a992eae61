"""`svc export`: write a dataset's canonical log as JSON Lines (see ingest/export.py)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated

import typer

from cli.commands.ingest import DatasetChoice, DatasetOpt, run_on_stack
from cli.common import DataDir, JsonFlag, err_console, fail, print_json, settings_for


def parse_ts(value: str | None) -> datetime | None:
    """RFC 3339 / ISO 8601; a time without a zone is UTC."""
    if value is None:
        return None
    try:
        ts = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise typer.BadParameter(f"not a timestamp: {value!r} (use e.g. 2024-09-08T17:00:00Z)") from None
    return ts if ts.tzinfo else ts.replace(tzinfo=timezone.utc)


def register(app: typer.Typer) -> None:
    @app.command("export")
    def export(
        out: Annotated[Path, typer.Argument(help="The JSON Lines file to write")],
        since: Annotated[str | None, typer.Option("--from", help="Only records appended at or after this time")] = None,
        until: Annotated[str | None, typer.Option("--to", help="Only records appended at or before this time")] = None,
        dataset: DatasetOpt = DatasetChoice.live,
        as_json: JsonFlag = False,
        data_dir: DataDir = None,
    ) -> None:
        """Write the dataset's feed log (teams, games, players) as JSON Lines, per-entity order kept."""
        from ingest.export import export as write

        start, end = parse_ts(since), parse_ts(until)
        if start and end and end < start:
            fail("--to is before --from")
        settings = settings_for(data_dir)
        with err_console.status(f"exporting {dataset.value} to {out}"):
            counts = run_on_stack(write(settings, dataset.value, out, start, end))
        if as_json:
            print_json(counts)
        else:
            err_console.print(f"wrote {counts['lines']} events to {out}"
                              + (f" ({counts['skipped']} undecodable records skipped)" if counts["skipped"] else ""))
