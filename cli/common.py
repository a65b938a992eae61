"""What every `svc` command shares: the data-dir option, settings, output helpers."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Annotated, Any

import msgspec
import typer
from rich.console import Console

from infra.settings import Settings, load_settings

console = Console(stderr=False)
err_console = Console(stderr=True)

DataDir = Annotated[
    Path | None,
    typer.Option(
        "--data-dir",
        envvar="SVC_DATA_DIR",
        help="Where `svc up` keeps its state and records the running stack [default: ./.svc]",
        show_default=False,
    ),
]
JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a table")]


def settings_for(data_dir: Path | None, **overrides: Any) -> Settings:
    """Settings for a command: environment > the stack `svc up` recorded > defaults."""
    return load_settings(data_dir=data_dir, **overrides)


def run(coro):
    return asyncio.run(coro)


def print_json(value: Any) -> None:
    sys.stdout.write(msgspec.json.encode(value, enc_hook=str).decode() + "\n")
    sys.stdout.flush()


def fail(message: str, code: int = 1) -> None:
    err_console.print(f"[red]error:[/red] {message}")
    raise typer.Exit(code)
