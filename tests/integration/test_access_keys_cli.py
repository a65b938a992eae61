"""`svc keys` against a real database, and the keys it makes working (or not) on the real app."""

from __future__ import annotations

import asyncio
import json
import re

import asyncpg
import msgspec
from typer.testing import CliRunner

from cli.main import app as svc
from domain.ids import ALPHABET
from tests.integration.access_support import problem, serving


async def keys(settings, *args: str):
    """Run `svc keys ...` as a user would (the CLI runs its own event loop, so in a thread)."""
    env = {"DATABASE_URL": settings.database_url, "SVC_KEY_SECRET": settings.key_secret, "SVC_DATA_DIR": str(settings.data_dir)}
    result = await asyncio.to_thread(CliRunner().invoke, svc, ["keys", *args], env=env)
    return result


async def test_create_prints_the_key_once_as_one_json_object(settings, redis_url):  # noqa: F811
    result = await keys(settings, "create", "--account", "acme", "--plan", "pro",
                        "--scopes", "read:odds,read:league", "--mode", "test", "--json")
    assert result.exit_code == 0, result.output
    created = json.loads(result.stdout)  # exactly one object, nothing else on stdout
    assert set(created) == {"key", "account_id", "plan", "scopes", "mode"}
    assert re.fullmatch(rf"svc_test_[{ALPHABET}]{{48}}", created["key"])
    assert re.fullmatch(rf"acct_[{ALPHABET}]{{20}}", created["account_id"])
    assert (created["plan"], created["scopes"], created["mode"]) == ("pro", ["read:league", "read:odds"], "test")

    conn = await asyncpg.connect(settings.database_url)
    try:
        stored = await conn.fetchrow("SELECT * FROM access.api_keys")
    finally:
        await conn.close()
    row_text = " ".join(str(v) for v in dict(stored).values())
    assert created["key"] not in row_text and created["key"][9:] not in row_text  # only a keyed hash is kept
    assert len(stored["key_hash"]) == 32

    app_settings = msgspec.structs.replace(settings, redis_url=redis_url)
    async with serving(app_settings) as served, served.client(key=created["key"]) as c:
        status = (await c.get("/v1/status")).json()
    assert (status["credential"], status["mode"], status["plan"], status["account_id"]) == (
        "key", "test", "pro", created["account_id"])
    assert status["scopes"] == ["read:league", "read:odds"]


async def test_plain_create_prints_the_key_on_stdout_and_notes_on_stderr(settings):
    result = await keys(settings, "create", "--account", "acme", "--plan", "free", "--scopes", "read:odds")
    assert result.exit_code == 0, result.output
    assert re.fullmatch(rf"svc_live_[{ALPHABET}]{{48}}\n", result.stdout)
    assert "only time the key is shown" in result.stderr


async def test_scopes_the_plan_does_not_allow_are_refused(settings):
    for plan, scopes, refused in (("free", "read:odds,read:league", "read:league"),
                                  ("scale", "run:simulation", "run:simulation"),
                                  ("developer", "read:tracker", "read:tracker"),
                                  ("pro", "read:everything", "read:everything")):
        result = await keys(settings, "create", "--account", f"acct-{plan}", "--plan", plan, "--scopes", scopes)
        assert result.exit_code == 1, result.output
        assert refused in result.stderr and result.stdout == ""
    bad_plan = await keys(settings, "create", "--account", "x", "--plan", "enterprise", "--scopes", "read:odds")
    assert bad_plan.exit_code == 2
    listed = await keys(settings, "list", "--json")
    assert json.loads(listed.stdout)["data"] == []  # nothing was created


async def test_an_account_keeps_one_plan(settings):
    assert (await keys(settings, "create", "--account", "acme", "--plan", "free", "--scopes", "read:odds")).exit_code == 0
    again = await keys(settings, "create", "--account", "acme", "--plan", "scale", "--scopes", "read:odds")
    assert again.exit_code == 1 and "on plan free" in again.stderr


async def test_list_never_shows_a_key_and_revoke_stops_it(settings, redis_url):  # noqa: F811
    made = [json.loads((await keys(settings, "create", "--account", name, "--plan", "free", "--scopes",
                                   "read:odds", "--json")).stdout) for name in ("acme", "beta")]
    listing = await keys(settings, "list")
    listing_json = await keys(settings, "list", "--json")
    for output in (listing.output, listing_json.output):
        for m in made:
            assert m["key"] not in output and m["key"][9:25] not in output  # neither key nor handle
    rows = json.loads(listing_json.stdout)["data"]
    assert [r["account"] for r in rows] == ["acme", "beta"] and all(r["revoked_at"] is None for r in rows)
    assert all(re.fullmatch(rf"key_[{ALPHABET}]{{20}}", r["key_id"]) for r in rows)
    only_beta = json.loads((await keys(settings, "list", "--account", "beta", "--json")).stdout)["data"]
    assert [r["account_id"] for r in only_beta] == [made[1]["account_id"]]

    app_settings = msgspec.structs.replace(settings, redis_url=redis_url)
    async with serving(app_settings) as served, served.client(key=made[0]["key"]) as c:
        assert (await c.get("/v1/status")).status_code == 200
        revoked = await keys(settings, "revoke", rows[0]["key_id"], "--json")
        assert revoked.exit_code == 0 and json.loads(revoked.stdout)["revoked_at"] is not None
        # the process learns of the revocation from Postgres's notification (api/access/service.py),
        # which may arrive a moment after the CLI's commit: the key is refused once it has
        for _ in range(100):
            r = await c.get("/v1/status")
            if r.status_code != 200:
                break
            await asyncio.sleep(0.05)
        assert r.status_code == 401 and problem(r)["param"] == "Authorization"
    async with serving(app_settings) as served, served.client(key=made[1]["key"]) as c:
        assert (await c.get("/v1/status")).status_code == 200  # the other key is untouched
    missing = await keys(settings, "revoke", "key_00000000000000000000")
    assert missing.exit_code == 1 and "no key" in missing.stderr
