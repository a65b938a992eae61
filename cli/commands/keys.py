"""`svc keys create|list|revoke`: API keys. A key is printed once, at creation; only its keyed hash is kept."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer
from rich.table import Table

from cli.common import DataDir, JsonFlag, console, err_console, fail, print_json, run, settings_for


class PlanChoice(str, Enum):
    free = "free"
    pro = "pro"
    developer = "developer"
    scale = "scale"


class ModeChoice(str, Enum):
    live = "live"
    test = "test"


def _with_connection(settings, action, *args, **kwargs):
    """Run `action(conn, ...)` on a connection to the stack's (migrated) database."""
    from infra.db import connect
    from infra.migrate import migrate

    async def go():
        conn = await connect(settings.require_database())
        try:
            await migrate(conn)  # idempotent: a fresh database gets the access tables
            return await action(conn, *args, **kwargs)
        finally:
            await conn.close()

    return run(go())


def _row(record) -> dict:
    return {
        "key_id": record.key_id,
        "account": record.account,
        "account_id": record.account_id,
        "plan": record.plan,
        "mode": record.mode,
        "scopes": list(record.scopes),
        "created_at": record.created_at.isoformat(),
        "revoked_at": record.revoked_at.isoformat() if record.revoked_at else None,
    }


def register(app: typer.Typer) -> None:
    keys = typer.Typer(help="API keys: create (shown once), list, revoke.", no_args_is_help=True)
    app.add_typer(keys, name="keys")

    @keys.command("create")
    def create(
        account: Annotated[str, typer.Option("--account", help="Account name; created on first use with --plan")],
        plan: Annotated[PlanChoice, typer.Option("--plan", help="The account's plan")],
        scopes: Annotated[str, typer.Option("--scopes", help="Comma-separated scopes the plan allows")],
        mode: Annotated[ModeChoice, typer.Option("--mode", help="live data, or the test sandbox")] = ModeChoice.live,
        data_dir: DataDir = None,
        as_json: JsonFlag = False,
    ) -> None:
        """Create a key and print it once: it cannot be shown again."""
        from access.plans import parse_scopes
        from access.store import KeyRefused, create_key

        settings = settings_for(data_dir)

        try:
            key, record = _with_connection(
                settings, create_key, settings.secret().encode(), account=account, plan=plan.value,
                scopes=parse_scopes(scopes), mode=mode.value,
            )
        except KeyRefused as exc:
            fail(str(exc))
        if as_json:
            print_json({
                "key": key, "account_id": record.account_id, "plan": record.plan,
                "scopes": list(record.scopes), "mode": record.mode,
            })
            return
        console.print(key, markup=False, highlight=False, soft_wrap=True)
        err_console.print(
            f"key {record.key_id} for {record.account} ({record.account_id}), plan {record.plan}, "
            f"mode {record.mode}, scopes: {', '.join(record.scopes) or '(none)'}\n"
            "This is the only time the key is shown. Send it only as 'Authorization: Bearer <key>'.",
            markup=False, highlight=False,
        )

    @keys.command("list")
    def list_(
        account: Annotated[str | None, typer.Option("--account", help="Only this account's keys")] = None,
        data_dir: DataDir = None,
        as_json: JsonFlag = False,
    ) -> None:
        """List keys (their IDs, never the keys)."""
        from access.store import list_keys

        settings = settings_for(data_dir)

        rows = [_row(r) for r in _with_connection(settings, list_keys, account)]
        if as_json:
            print_json({"object": "list", "data": rows})
            return
        table = Table("key_id", "account", "account_id", "plan", "mode", "scopes", "created_at", "revoked_at")
        for r in rows:
            table.add_row(
                r["key_id"], r["account"], r["account_id"], r["plan"], r["mode"], ", ".join(r["scopes"]),
                r["created_at"], r["revoked_at"] or "",
            )
        console.print(table)

    @keys.command("revoke")
    def revoke(
        key_id: Annotated[str, typer.Argument(help="The key's ID (key_...), as `svc keys list` shows it")],
        data_dir: DataDir = None,
        as_json: JsonFlag = False,
    ) -> None:
        """Revoke a key: calls with it answer 401 from then on."""
        from access.store import revoke_key

        settings = settings_for(data_dir)

        record = _with_connection(settings, revoke_key, key_id)
        if record is None:
            fail(f"no key {key_id}")
        if as_json:
            print_json(_row(record))
        else:
            console.print(f"revoked {record.key_id} ({record.account}) at {record.revoked_at.isoformat()}")
