"""`svc doctor`: each component of the running stack, where it runs, whether it answers."""

from __future__ import annotations

import asyncio

import typer
from rich.table import Table

from cli.common import DataDir, JsonFlag, console, print_json, run, settings_for


def register(app: typer.Typer) -> None:
    @app.command("doctor")
    def doctor(data_dir: DataDir = None, as_json: JsonFlag = False) -> None:
        """Check broker, Postgres, Redis, API, projector, supervisor and the compiled fold; exit 1 if any fails."""
        from infra.doctor import diagnose, healthy
        from projections import compiled

        settings = settings_for(data_dir)
        report = run(diagnose(settings))
        report["fold"] = compiled.report()
        if report["broker"]["ok"] and report["postgres"]["ok"]:
            # infra cannot look into projections (layer rule): the projector's progress is
            # measured here, where both are in reach (so is the compiled fold, above)
            report["projector"].update(run(_progress(settings)))
        if as_json:
            print_json(report)
        else:
            table = Table("component", "where", "answers", "details")
            for name, part in report.items():
                ok = part["ok"]
                mark = "[green]yes[/green]" if ok else ("[dim]not configured[/dim]" if ok is None else "[red]no[/red]")
                details = ", ".join(f"{k}={v}" for k, v in part.items() if k not in ("address", "ok"))
                table.add_row(name, str(part["address"] or "-"), mark, details)
            console.print(table)
        raise typer.Exit(0 if healthy(report) else 1)


async def _progress(settings) -> dict:
    from infra.db import connect
    from projections.progress import progress, report

    try:
        conn = await connect(settings.require_database(), timeout=5)
        try:
            return report(await asyncio.wait_for(progress(settings, conn), 10))
        finally:
            await conn.close()
    except Exception as exc:  # the rest of the report still stands
        return {"progress": f"not measured: {type(exc).__name__}"}
