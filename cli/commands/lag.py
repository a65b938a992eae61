"""`svc lag`: how far the read models are behind the log, per projector group and partition."""

from __future__ import annotations

import asyncio
import time
from typing import Annotated

import typer

from cli.common import DataDir, JsonFlag, console, print_json, run, settings_for


def register(app: typer.Typer) -> None:
    @app.command("lag")
    def lag_cmd(
        data_dir: DataDir = None,
        wait: Annotated[float | None, typer.Option(
            "--wait", help="Block until every partition has zero lag and no delta waits in the outbox; "
                           "exit 1 if that takes longer than SECONDS", metavar="SECONDS")] = None,
        as_json: JsonFlag = False,
    ) -> None:
        """Lag = log end offset - records applied to the read models (Postgres tracking rows)."""
        from rich.table import Table

        from infra.db import connect
        from projections.lag import measure

        settings = settings_for(data_dir)

        async def go():
            conn = await connect(settings.require_database())
            try:
                deadline = None if wait is None else time.monotonic() + wait
                while True:
                    rows, outbox = await measure(settings, conn)
                    done = all(r.lag == 0 for r in rows) and not any(outbox.values())
                    if deadline is None or done or time.monotonic() >= deadline:
                        return rows, outbox, done
                    await asyncio.sleep(0.2)
            finally:
                await conn.close()

        rows, outbox, done = run(go())
        if as_json:
            print_json({
                "caught_up": done,
                "partitions": [r.__dict__ for r in rows],
                "outbox": outbox,
            })
        else:
            table = Table("group", "dataset", "topic", "partition", "end", "applied", "lag")
            for r in rows:
                table.add_row(r.group, r.dataset, r.topic, str(r.partition), str(r.end), str(r.applied), str(r.lag))
            console.print(table)
            console.print("deltas waiting in the outbox: " + ", ".join(f"{d} {n}" for d, n in outbox.items()))
        if wait is not None and not done:
            raise typer.Exit(1)
