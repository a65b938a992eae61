"""`svc watch TOPIC...`: live changes of Wire topics, printed as they come (built on the Python
client's `wire.subscribe`, so it resumes after drops and refetches a snapshot after a gap)."""

from __future__ import annotations

import os
from typing import Annotated, Optional

import typer

from cli.common import console, err_console


def register(app: typer.Typer) -> None:
    app.command("watch")(watch)


def _summary(event) -> str:
    data = event.state
    if event.topic.startswith("answer:"):  # each version is the whole answer
        return f"{data.get('answer_id')} (supersedes {data.get('supersedes') or '-'}): {data.get('summary')}"
    if event.topic.startswith("game:"):
        score = data.get("score") or {}
        return (f"{data.get('status')} {score.get('home', '-')}-{score.get('away', '-')}"
                f" {data.get('period') or ''} {data.get('clock') or ''}").strip()
    main = next((line for line in data.get("lines", []) if line.get("is_main")), None)
    prices = " / ".join(f"{o['name']} {o['price']:.3f}" for o in (main or {}).get("outcomes", [])
                        if o.get("price") is not None)
    return f"{data.get('type')} {data.get('status')} {prices}".strip()


def watch(
    topics: Annotated[list[str], typer.Argument(help="Wire topics, e.g. game:gm_... market:mkt_... answer:ans_...")],
    url: Annotated[str, typer.Option("--url", help="The API's base URL")] = "http://127.0.0.1:8000",
    mode: Annotated[Optional[str], typer.Option("--mode", help="live or test (the sandbox)")] = None,
    count: Annotated[int, typer.Option("--count", help="Stop after this many events (0: never)")] = 0,
) -> None:
    """Print each topic's snapshot, then every change, in seq order (key from SVC_API_KEY)."""
    from client import Client, SvcError

    key = os.environ.get("SVC_API_KEY")
    if not key:
        err_console.print("[red]set SVC_API_KEY to a key with wire:connect[/red]")
        raise typer.Exit(1)
    seen = 0
    try:
        for event in Client(base_url=url, api_key=key).wire.subscribe(topics, mode=mode):
            console.print(f"[dim]{event.seq:>6}[/dim] [bold]{event.topic}[/bold] {event.type}: {_summary(event)}",
                          highlight=False)
            seen += 1
            if count and seen >= count:
                return
    except SvcError as exc:
        err_console.print(f"[red]{exc}[/red]")
        raise typer.Exit(1)
    except KeyboardInterrupt:
        return
