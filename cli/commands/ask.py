"""`svc ask "question"`: an answer (docs/answers.md) printed with its citations.

Runs the same engine as `POST /v1/answers` against the running stack's read models (found
through the data dir, like every command); an operator tool, so no key. The question is not
logged or stored here either, and the answer is not kept for retrieval."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Optional

import typer

from cli.common import DataDir, JsonFlag, console, err_console, fail, print_json, run, settings_for


def register(app: typer.Typer) -> None:
    @app.command("ask")
    def ask(
        question: Annotated[str, typer.Argument(help="The question, 1 to 1000 characters.")],
        state: Annotated[Optional[str], typer.Option("--state", help="A US state (two letters): its helpline and law")] = None,
        dataset: Annotated[str, typer.Option("--dataset", "-d", help="live or test")] = "live",
        json_out: JsonFlag = False,
        data_dir: DataDir = None,
    ) -> None:
        """Answer a question in words, with its figures and citations."""
        from api.answers.understand import US_STATES
        from schemas.datasets import DATASETS

        if not 1 <= len(question) <= 1000 or not question.strip():
            fail("the question is 1 to 1000 characters", 2)
        if state is not None and state.upper() not in US_STATES:
            fail("--state is the two-letter code of a US state", 2)
        if dataset not in DATASETS:
            fail("--dataset is live or test", 2)
        status, body = run(_ask(settings_for(data_dir), question, state.upper() if state else None, dataset))
        if json_out:
            print_json(body)
        elif status != 201:
            err_console.print(f"[red]{body['code']}[/red]: {body['detail']}")
        else:
            _print(body)
        raise typer.Exit(0 if status == 201 else 1)


async def _ask(settings, question: str, state: str | None, dataset: str) -> tuple[int, dict]:
    import msgspec

    from api.answers import engine
    from api.problems import CATALOG
    from infra.db import connect
    from schemas.datasets import pg_schema
    from domain.ids import random_id

    conn = await connect(settings.require_database())
    try:
        ask = engine.Ask(question=question, state=state, answer_id=random_id("answer"), request_id=None,
                         now=datetime.now(UTC), expires_at=None)
        try:
            answer = await engine.answer(conn, f'"{pg_schema(dataset)}"', ask)
        except engine.Refused as exc:
            return CATALOG[exc.code].status, {"code": exc.code, "detail": exc.detail, "param": exc.param}
        return 201, msgspec.to_builtins(answer)
    finally:
        await conn.close()


def _print(a: dict) -> None:
    from rich.markup import escape

    console.print(f"[bold]{escape(a['summary'])}[/bold]")
    console.print(f"[dim]category {a['category']} · {a['tier']} · {a['playbook']}[/dim]")
    for s in a["sentences"]:
        marks = escape("".join(f"[{c}]" for c in s["citations"]))
        console.print(f"  {escape(s['text'])} [cyan]{marks}[/cyan]", highlight=False)
    for x in a["assumptions"]:
        console.print(f"  [yellow]assumed:[/yellow] {escape(x['text'])}", highlight=False)
    for c in a["citations"]:
        where = c["url"] or c["ref"] or ""
        console.print(f"  [cyan]{c['citation_id']}[/cyan] {escape(c['label'])} ({escape(c['source'])}, as of {c['as_of']}) "
                      f"{escape(where)}", highlight=False, soft_wrap=True)
    if a.get("refusal"):
        console.print(f"  [dim]help: {a['refusal']['help_url']}[/dim]")
    console.print(f"[dim]{escape(a['rg_line'])}[/dim]", highlight=False)
