"""`svc strategies list|show|check`: the strategy registry from the running stack's read models
(the same records and the same check as the API; docs/strategies.md).

`check` takes inputs as `--input id=value` (repeat it; a list as comma-separated values, e.g.
`--input prices=171,-170`); prices in `--format`. `--json` prints one JSON object. A problem
(missing execution input, invalid input, ...) exits 1 with its code, param and detail.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.table import Table

from cli.common import DataDir, JsonFlag, console, fail, print_json, settings_for

strategies_app = typer.Typer(help="The strategy registry: verdicts, evidence and checks on your numbers.",
                             no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(strategies_app, name="strategies")


Dataset = Annotated[str, typer.Option("--dataset", help="live or test")]


async def _with_registry(data_dir, dataset: str, then=None):
    """The registry (and `then(conn, schema, registry)`'s result, on the same connection)."""
    from api.registry import read_registry
    from infra.db import connect
    from schemas.datasets import pg_schema

    settings = settings_for(data_dir)
    if not settings.database_url:
        fail("no database: start the stack (`svc up`) or set DATABASE_URL")
    schema = f'"{pg_schema(dataset)}"'  # type: ignore[arg-type]
    conn = await connect(settings.database_url)
    try:
        reg = await read_registry(conn, schema)
        return reg if then is None else await then(conn, schema, reg)
    finally:
        await conn.close()


def _load(data_dir, dataset: str, then=None):
    from cli.common import run

    if dataset not in ("live", "test"):
        fail("--dataset is live or test")
    return run(_with_registry(data_dir, dataset, then))


@strategies_app.command("list")
def list_(
    family: Annotated[Optional[str], typer.Option("--family", help="B1 to B14, F1 to F9")] = None,
    verdict: Annotated[Optional[str], typer.Option("--verdict", help="robust, conditional, weak, myth, prohibited")] = None,
    route: Annotated[Optional[str], typer.Option("--route", help="execute, check_then_execute, warn_first, decline, refuse")] = None,
    dataset: Dataset = "live", as_json: JsonFlag = False, data_dir: DataDir = None,
) -> None:
    """Every strategy in ledger order (family, then row), with its verdict and route."""
    reg = _load(data_dir, dataset)
    rows = [(row, e) for row, e in reg.strategies if (family is None or e.family == family)
            and (verdict is None or e.verdict == verdict) and (route is None or e.route == route)]
    if as_json:
        version, as_of = reg.version()
        print_json({"registry_version": version, "as_of": as_of,
                    "data": [reg.strategy(row, e, None) for row, e in rows]})
        return
    table = Table("row", "family", "id", "verdict", "route", "v")
    for row, e in rows:
        table.add_row(str(e.ledger_row), e.family, e.slug, e.verdict, e.route, str(row["version"]))
    console.print(table)


@strategies_app.command("show")
def show(
    strategy_id: Annotated[str, typer.Argument(help="Registry ID (slug) or stg_ ID")],
    dataset: Dataset = "live", as_json: JsonFlag = False, data_dir: DataDir = None,
) -> None:
    """One strategy: verdict, evidence, inputs, preconditions, alternative."""
    reg = _load(data_dir, dataset)
    found = reg.find(strategy_id)
    if found is None:
        fail(f"not_found (strategy_id): there is no strategy {strategy_id!r}")
    s = reg.strategy(*found, None)
    if as_json:
        print_json(s)
        return
    console.print(f"[bold]{s.name}[/bold] ({s.id}, {s.public_id}), {s.family} {s.family_name}, row {s.ledger_row}")
    console.print(f"verdict: {s.verdict} (grade {s.evidence.grade}, v{s.version}); route: {s.route}")
    console.print(s.verdict_text)
    console.print(f"decisive figure: {s.decisive_figure}")
    console.print(f"evidence: {s.evidence.summary}")
    for src in s.evidence.sources:
        console.print(f"  - {src}")
    for i in s.inputs:
        kind = "execution input" if i.execution_input else f"assumed {i.default}" if i.default else "optional"
        console.print(f"input {i.id} ({kind}): {i.what}")
    if s.alternative:
        console.print(f"instead: {s.alternative.id}: {s.alternative.why}")
    console.print(f"check: {s.check}")


@strategies_app.command("check")
def check(
    strategy_id: Annotated[str, typer.Argument(help="Registry ID (slug) or stg_ ID")],
    inputs: Annotated[Optional[list[str]], typer.Option("--input", "-i", help="id=value; a list as a,b,c")] = None,
    price_format: Annotated[str, typer.Option("--format", help="decimal, american, fractional or implied")] = "decimal",
    size_stake: Annotated[bool, typer.Option("--size-stake", help="Ask for a stake")] = False,
    jurisdiction: Annotated[Optional[str], typer.Option("--jurisdiction", help="ISO 3166, e.g. US-NJ")] = None,
    chain: Annotated[Optional[str], typer.Option("--chain", help="Recipe ID, e.g. C1")] = None,
    dataset: Dataset = "live", as_json: JsonFlag = False, data_dir: DataDir = None,
) -> None:
    """Run a strategy's check on your numbers (the API's POST /v1/strategies/{id}:check)."""
    import msgspec

    from api.problems import ProblemError
    from api.strategy_check import CheckRequest

    values: dict[str, object] = {}
    for item in inputs or []:
        name, sep, value = item.partition("=")
        if not sep or not name:
            fail(f"--input {item!r}: write id=value")
        values[name] = value.split(",") if "," in value else value
    body = {"inputs": values, "format": price_format, "size_stake": size_stake, "jurisdiction": jurisdiction,
            "chain": chain}
    try:
        request = msgspec.convert({k: v for k, v in body.items() if v is not None}, CheckRequest)
    except msgspec.ValidationError as exc:
        fail(f"invalid_request: {exc}")
    from api.registry import check_with_rules

    try:
        result = _load(data_dir, dataset, lambda conn, schema, reg: check_with_rules(conn, schema, reg, strategy_id, request, None))
    except ProblemError as exc:
        fail(f"{exc.code} ({exc.param}): {exc.detail}")
    if as_json:
        print_json(result)
        return
    console.print(f"[bold]{result.name}[/bold]: {result.verdict}, route {result.route} -> [bold]{result.route_taken}[/bold]")
    console.print(result.message)
    table = Table("figure", "value", "formula")
    for f in result.figures:
        table.add_row(f.id, str(f.value), f.formula or "-")
    console.print(table)
    for p in result.preconditions:
        mark = {True: "pass", False: "FAIL", None: "not checked"}[p.passed]
        console.print(f"{mark}: {p.check} ({p.figure} = {p.value} {p.op} {p.threshold})")
    if result.alternative:
        console.print(f"instead: {result.alternative.id}: {result.alternative.why}")
    for rule in result.rules:
        console.print(f"{rule.kind}: {rule.title} ({rule.url})")
    console.print(result.rg_line)
