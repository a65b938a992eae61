"""`svc migrate`: apply pending migrations and create missing topics (what `svc up` does first)."""

from __future__ import annotations

import typer

from cli.common import DataDir, JsonFlag, console, print_json, run, settings_for


def register(app: typer.Typer) -> None:
    @app.command("migrate")
    def migrate_cmd(data_dir: DataDir = None, as_json: JsonFlag = False) -> None:
        """Apply SQL migrations (recorded in schema_migrations) and create every topic."""
        from infra.db import connect, wait_for_database
        from infra.migrate import migrate
        from infra.topics import ensure_topics

        settings = settings_for(data_dir)

        async def go():
            url = settings.require_database()
            await wait_for_database(url, timeout=60)
            conn = await connect(url)
            try:
                applied = await migrate(conn)
            finally:
                await conn.close()
            topics = await ensure_topics(settings) if settings.kafka_bootstrap else {}
            return applied, topics

        applied, topics = run(go())
        if as_json:
            print_json({"applied": applied, "topics": topics})
        else:
            console.print(f"applied {len(applied)} migration(s); {len(topics)} topic(s) in place")
