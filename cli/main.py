"""`svc`: the command-line tool. Each module in `cli.commands` registers its own commands."""

from __future__ import annotations

import importlib
import pkgutil

import typer

import cli.commands

app = typer.Typer(
    name="svc",
    help="Sports-data ingestion, projections and read API: run the stack, ingest feeds, replay, inspect.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
)



@app.callback()
def main() -> None:
    """Sports-data ingestion, projections and read API."""


for info in sorted(pkgutil.iter_modules(cli.commands.__path__), key=lambda m: m.name):
    module = importlib.import_module(f"cli.commands.{info.name}")
    module.register(app)

if __name__ == "__main__":
    app()
