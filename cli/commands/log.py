"""`svc log`: the log the embedded stack keeps in `<data-dir>/log/` (see docs/log.md)."""

from __future__ import annotations

import os

import typer

from cli.common import DataDir, JsonFlag, console, fail, print_json, settings_for


def _stack_running(run_dir) -> int | None:
    try:
        pid = int((run_dir / "supervisor.pid").read_text())
        os.kill(pid, 0)
        return pid
    except (FileNotFoundError, ValueError, ProcessLookupError):
        return None
    except PermissionError:
        return pid


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="The log the embedded stack keeps on disk.", no_args_is_help=True)
    app.add_typer(group, name="log")

    @group.command("show")
    def show(data_dir: DataDir = None, as_json: JsonFlag = False) -> None:
        """Where the log is kept and how many records each topic holds."""
        from infra.log_copy import describe

        report = describe(settings_for(data_dir))
        if as_json:
            print_json(report)
            return
        console.print(f"log kept in {report['address']}")
        for topic, count in report.get("records", {}).items():
            console.print(f"  {topic}: {count}")
        if report.get("error"):
            fail(report["error"])

    @group.command("reset")
    def reset(data_dir: DataDir = None) -> None:
        """Move the kept log aside (to log.moved-N) and start an empty one: for a damaged copy
        or a data dir from before the log was kept. The read models are rebuilt from the empty
        log at the next start; ingest the files again."""
        from infra.log_copy import reset as reset_log

        settings = settings_for(data_dir)
        pid = _stack_running(settings.run_dir)
        if pid is not None:
            fail(f"the stack of {settings.data_dir} is running (supervisor pid {pid}): stop it first")
        moved = reset_log(settings.data_dir)
        where = f"; the old one is in {moved}" if moved else ""
        console.print(f"an empty log is kept in {settings.data_dir / 'log'}{where}")
