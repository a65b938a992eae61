"""`svc openapi` and `svc asyncapi`: the REST and Wire documents, generated from the code."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import msgspec
import typer


def register(app: typer.Typer) -> None:
    @app.command("openapi")
    def openapi(
        out: Annotated[Path, typer.Option("--out", help="File to write")] = Path("docs/openapi.json"),
    ) -> None:
        """Write the OpenAPI 3.1 document of the REST API."""
        from api.app import create_litestar
        from infra.settings import load_settings

        app_ = create_litestar(load_settings(env={}, use_stack=False))
        document = app_.openapi_schema.to_schema()
        out.parent.mkdir(parents=True, exist_ok=True)
        # keys sorted: the schema holds sets (response headers), so the same code wrote the
        # document in another order on each run and every regeneration looked like a change
        out.write_bytes(msgspec.json.format(msgspec.json.encode(document, order="deterministic"), indent=2) + b"\n")
        typer.echo(f"wrote {out} ({len(document.get('paths', {}))} paths)")

    @app.command("asyncapi")
    def asyncapi(
        out: Annotated[Path, typer.Option("--out", help="File to write")] = Path("docs/asyncapi.json"),
    ) -> None:
        """Write the AsyncAPI 3.0 document of the Wire deltas (generated from schemas.wire)."""
        from infra.version import VERSION
        from wire.asyncapi import document

        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(msgspec.json.format(msgspec.json.encode(document(VERSION), order="deterministic"), indent=2) + b"\n")
        typer.echo(f"wrote {out}")
