"""The strategy registry through the log and the API: files -> `svc ingest strategies` ->
feed.reference -> projector -> read models -> /v1/strategies, /v1/recipes and the check, with
versions, history, dead letters and verify. Real broker, real PostgreSQL."""

from __future__ import annotations

import shutil
from contextlib import asynccontextmanager
from fractions import Fraction

import msgspec
from litestar.testing import AsyncTestClient

from api.app import create_app
from api.idempotency import fingerprint
from api.strategy_check import CheckRequest
from infra.db import connect
from ingest.deadletters import read_dead_letters
from ingest.event_log import open_event_log
from ingest.strategies import ingest_registry, registry_root
from domain.ids import is_id
from schemas.strategies import family_order, strategy_id
from tests.integration.test_ingest_cli import one_summary, svc
from tests.integration.test_library_ingest import rows, run_verify
from tests.support.api_fixtures import make_key
from tests.support.projection_harness import projector, run_to_end


def copy_registry(tmp_path):
    root = tmp_path / "registry"
    shutil.copytree(registry_root() / "strategies", root / "strategies")
    shutil.copytree(registry_root() / "recipes", root / "recipes")
    return root


async def ingest(settings, root, dataset="live"):
    async with open_event_log(settings, dataset) as log:
        return await ingest_registry(root, log, settings)


@asynccontextmanager
async def client(settings):
    key = await make_key(settings.database_url, "strategy-tests", {"read:reference"})
    async with AsyncTestClient(app=create_app(settings)) as c:
        c.headers["Authorization"] = f"Bearer {key}"
        yield c


async def loaded(settings, tmp_path):
    root = copy_registry(tmp_path)
    summary = await ingest(settings, root)
    assert summary.dead_lettered == 0, summary.reasons
    return root


async def test_registry_through_the_log_versions_history_and_verify(settings, topics, tmp_path):
    root = await loaded(settings, tmp_path)
    again = await ingest(settings, root)
    assert (again.events, again.accepted) == (0, 0)
    async with projector(settings) as p:
        await run_to_end(p)
        kelly = (await rows(settings, "SELECT * FROM live.strategies WHERE slug = 'kelly-criterion'"))[0]
        assert kelly["id"] == strategy_id("kelly-criterion") and kelly["version"] == 1 and kelly["family"] == "B5"
        async with client(settings) as c:
            first = (await c.get("/v1/strategies")).json()

        # a new source in the evidence moves the version; a new alias alone does not
        path = root / "strategies/B5/kelly-criterion.toml"
        text = path.read_text()
        path.write_text(text.replace('[[evidence.sources]]', '[[evidence.sources]]\ntitle = "Extra"\npublisher = "x"\n'
                                     'url = "https://example.org/kelly"\naccessed_on = 2026-11-26\n\n[[evidence.sources]]', 1))
        assert dict((await ingest(settings, root)).by_type) == {"StrategyRevised": 1}
        text = path.read_text()
        path.write_text(text.replace('aliases = ["kelly",', 'aliases = ["kelly bet", "kelly",', 1))
        assert (await ingest(settings, root)).accepted == 1
        # a broken file is dead-lettered and its strategy stays (so a recipe naming it, C45, still
        # stands); a removed file retires its strategy
        bad = root / "strategies/B9/favourite-longshot-bias.toml"
        bad.write_text(bad.read_text().replace('verdict = "conditional"', 'verdict = "maybe"', 1))
        # (a strategy no recipe names: removing one a recipe names dead-letters that recipe too)
        (root / "strategies/F4/cash-game-floor.toml").unlink()
        mixed = await ingest(settings, root)
        assert (mixed.dead_lettered, dict(mixed.by_type)) == (1, {"StrategyRetired": 1})
        letters = [d for d in await read_dead_letters(settings, "live") if d.source == "strategies"]
        assert letters[-1].file == "strategies/B9/favourite-longshot-bias.toml" and "verdict" in letters[-1].reason

        await run_to_end(p)
        kelly = (await rows(settings, "SELECT * FROM live.strategies WHERE slug = 'kelly-criterion'"))[0]
        assert (kelly["version"], kelly["revision"]) == (2, 3)
        history = await rows(settings, "SELECT revision, action, version FROM live.strategy_revisions "
                                       "WHERE entry_id = $1 ORDER BY revision", kelly["id"])
        assert [tuple(h.values()) for h in history] == [(1, "published", 1), (2, "revised", 2), (3, "revised", 2)]
        gone = (await rows(settings, "SELECT status FROM live.strategies WHERE slug = 'cash-game-floor'"))[0]
        assert gone["status"] == "retired"
        async with client(settings) as c:
            second = (await c.get("/v1/strategies")).json()
            assert (await c.get("/v1/strategies/cash-game-floor")).status_code == 404
            assert (await c.get("/v1/strategies/favourite-longshot-bias")).json()["verdict"] == "conditional"
        assert second["registry_version"] != first["registry_version"]
        by_id = {s["id"]: s for s in second["data"]}
        assert by_id["kelly-criterion"]["version"] == 2 and "kelly bet" in by_id["kelly-criterion"]["aliases"]
        assert len(second["data"]) == len(first["data"]) - 1
        result = await run_verify(settings)
        assert result.identical, result.differences


async def test_lists_details_filters_and_recipes(settings, topics, tmp_path):
    await loaded(settings, tmp_path)
    async with projector(settings) as p:
        await run_to_end(p)
    async with client(settings) as c:
        page = (await c.get("/v1/strategies")).json()
        assert page["object"] == "list" and page["has_more"] is False and page["next_cursor"] is None
        assert page["as_of"].endswith("T00:00:00Z") and page["registry_version"]
        data = page["data"]
        assert len(data) >= 11
        order = [(family_order(s["family"]), s["ledger_row"]) for s in data]
        assert order == sorted(order) and [s["ledger_row"] for s in data] == sorted(s["ledger_row"] for s in data)
        for s in data:
            assert s["object"] == "strategy" and is_id("strategy", s["public_id"]) and s["family_name"]
            assert s["evidence"]["sources"] and all(isinstance(x, str) for x in s["evidence"]["sources"])
            assert s["evidence"]["stale"] is False and s["rg_line"] and s["version"] >= 1
            assert s["check"] == f"POST /v1/strategies/{s['id']}:check"
            if s["verdict"] in ("weak", "myth"):
                assert s["alternative"]["id"] and s["alternative"]["verdict"] == "robust"
            if s["verdict"] == "prohibited":
                assert s["route"] == "refuse"
            for card in s["formulas"]:  # every formula card named exists
                assert (await c.get(f"/v1/formulas/{card}")).status_code == 200, card

        b5 = (await c.get("/v1/strategies", params={"family": "B5"})).json()["data"]
        assert {s["id"] for s in b5} >= {"kelly-criterion", "fractional-kelly"} and all(s["family"] == "B5" for s in b5)
        refused = (await c.get("/v1/strategies", params={"verdict": "prohibited"})).json()["data"]
        assert refused and all(s["route"] == "refuse" for s in refused)
        routed = (await c.get("/v1/strategies", params={"route": "decline"})).json()["data"]
        assert {s["id"] for s in routed} >= {"martingale"} and all(s["route"] == "decline" for s in routed)
        assert (await c.get("/v1/strategies", params={"family": "B77"})).json()["data"] == []
        for params, param in (({"family": "X1"}, "family"), ({"verdict": "great"}, "verdict"), ({"route": "go"}, "route")):
            r = await c.get("/v1/strategies", params=params)
            assert r.status_code == 400 and r.json()["param"] == param, params

        kelly = (await c.get("/v1/strategies/kelly-criterion")).json()
        assert (await c.get(f"/v1/strategies/{kelly['public_id']}")).json()["id"] == "kelly-criterion"
        assert kelly["route"] == "check_then_execute" and kelly["verdict"] == "robust"
        assert {i["id"]: i["execution_input"] for i in kelly["inputs"]}["probability"] is True
        missing = await c.get("/v1/strategies/no-such-strategy")
        assert missing.status_code == 404 and missing.json()["param"] == "strategy_id"

        recipes = (await c.get("/v1/recipes")).json()
        assert recipes["object"] == "list" and [r["id"] for r in recipes["data"]][:2] == ["C1", "C2"]
        for r in recipes["data"]:
            assert (await c.get(f"/v1/recipes/{r['id']}")).json()["id"] == r["id"]
            if not r["strategies"]:  # a chain with no strategy has no call
                assert r["calls"] == {"mcp": None, "api": None} and r["runs"] is False
                continue
            method, path = r["calls"]["api"].split(" ")
            assert method == "POST" and r["calls"]["mcp"]["arguments"]["chain"] == r["id"]
            assert r["calls"]["mcp"]["arguments"]["strategy"] == r["lead"] and path == f"/v1/strategies/{r['lead']}:check"
            # the call answers: a check, or a problem naming what it needs (never a 404 or a 500)
            answer = await c.post(path, json={"inputs": {}, "chain": r["id"]})
            assert answer.status_code in (200, 422), (r["id"], answer.text)
            if answer.status_code == 422:
                assert answer.json()["code"] in ("missing_execution_input", "needs_jurisdiction") and answer.json()["param"]
        c1 = (await c.get("/v1/recipes/C1")).json()
        assert c1["strategies"] == ["line-shopping", "fractional-kelly"] and c1["runs"] is True
        assert "probability" in c1["execution_inputs"] and "fraction" in c1["assumed_inputs"]
        assert (await c.get("/v1/recipes/C99")).json()["param"] == "recipe_id"
        assert any(ch["id"] == "C1" for ch in (await c.get("/v1/strategies/fractional-kelly")).json()["chains"])


def _figure(result, name):
    return next(f for f in result["figures"] if f["id"] == name)


async def test_checks_run_the_engine_maths(settings, topics, tmp_path):
    await loaded(settings, tmp_path)
    async with projector(settings) as p:
        await run_to_end(p)
    async with client(settings) as c:
        check = "/v1/strategies/{}:check".format
        # Kelly at 55% and evens: f* = (0.55 * 2 - 1) / (2 - 1) = 0.1
        r = await c.post(check("kelly-criterion"), json={"inputs": {"probability": "0.55", "price": "2.0", "bankroll": "1000"}})
        assert r.status_code == 200, r.text
        k = r.json()
        assert k["route_taken"] == "execute" and _figure(k, "full_fraction")["value"] == 0.1
        assert _figure(k, "full_fraction")["formula"] == "bet.kelly@1" and k["stake"] == {"share": 0.1, "amount": 100.0}
        assert k["preconditions"][0]["passed"] is True and k["rg_line"] and k["assumed"] == ["fraction", "cap"]
        # +100 American is the same price
        american = (await c.post(check("kelly-criterion"), json={"inputs": {"probability": 0.55, "price": 100},
                                                                 "format": "american"})).json()
        assert _figure(american, "full_fraction")["value"] == 0.1 and american["stake"]["amount"] is None
        # no edge: declined, stake zero, the sentence filled
        no = (await c.post(check("kelly-criterion"), json={"inputs": {"probability": "0.45", "price": "2.0"}})).json()
        assert no["route_taken"] == "decline" and no["stake"]["share"] == 0
        assert no["on_fail"] and "{" not in no["on_fail"][0] and "0.45" in no["on_fail"][0]
        half = (await c.post(check("fractional-kelly"), json={"inputs": {"probability": "0.55", "price": "2.0"}})).json()
        assert _figure(half, "stake_fraction")["value"] == 0.05

        # martingale: declined with its alternative, figures from the same maths
        m = await c.post(check("martingale"), json={"inputs": {"base_stake": 10, "bankroll": 1000, "price": 2.0,
                                                              "probability": 0.5}})
        assert m.status_code == 200, m.text
        mj = m.json()
        assert mj["route_taken"] == "decline" and mj["alternative"]["id"] == "fractional-kelly"
        assert _figure(mj, "losses_to_ruin")["value"] == 6 and _figure(mj, "edge")["value"] == 0
        bare = (await c.post(check("martingale"), json={})).json()
        assert bare["route_taken"] == "decline" and bare["figures"] == [] and bare["alternative"]
        sized = await c.post(check("martingale"), json={"size_stake": True})
        assert sized.status_code == 422 and sized.json()["code"] == "not_stake_eligible"

        # arbitrage on real prices (The Odds API sample, 2022 NFL week 1, best of 19 books):
        # Raiders +171 at Circa, Chargers -170 at DraftKings
        arb = (await c.post(check("two-way-arbitrage"), json={"inputs": {"prices": [171, -170], "stake": 1000},
                                                             "format": "american"})).json()
        booksum = 1 / (1 + Fraction(171, 100)) + 1 / (1 + Fraction(100, 170))
        assert arb["route_taken"] == "execute" and _figure(arb, "is_arbitrage")["value"] is True
        assert abs(_figure(arb, "booksum")["value"] - float(booksum)) < 1e-12
        assert abs(_figure(arb, "roi")["value"] - float(1 / booksum - 1)) < 1e-12
        one_book = (await c.post(check("two-way-arbitrage"), json={"inputs": {"prices": [-110, -110]},
                                                                  "format": "american"})).json()
        assert one_book["route_taken"] == "decline" and _figure(one_book, "is_arbitrage")["value"] is False

        # prohibited: refused, no figures
        fix = (await c.post(check("match-fixing"), json={})).json()
        assert fix["route_taken"] == "refuse" and fix["figures"] == [] and fix["alternative"] is None

        # input problems name themselves
        for body, code, param in (
            ({"inputs": {"price": "2.0"}}, "missing_execution_input", "probability"),
            ({"inputs": {"probability": "1.5", "price": "2.0"}}, "invalid_inputs", "probability"),
            ({"inputs": {"probability": "0.5", "price": "0.9"}}, "invalid_inputs", "price"),
            ({"inputs": {"probability": "0.5", "price": "2", "luck": 1}}, "invalid_inputs", "luck"),
        ):
            r = await c.post(check("kelly-criterion"), json=body)
            assert (r.status_code, r.json()["code"], r.json()["param"]) == (422, code, param), body
        r = await c.post(check("line-shopping"), json={"inputs": {"prices": [1.9, 2.0]}, "size_stake": True})
        assert r.status_code == 422 and r.json()["code"] == "not_stake_eligible"
        r = await c.post(check("no-such-strategy"), json={})
        assert r.status_code == 404 and r.json()["param"] == "strategy_id"
        r = await c.post("/v1/strategies/kelly-criterion", json={})
        assert r.status_code == 405


def test_the_command_ingests_the_shipped_registry(settings, topics):
    first = one_summary(svc(settings, "ingest", "strategies", "--json"))
    assert first["dead_lettered"] == 0 and first["accepted"] == first["events"] >= 15
    second = one_summary(svc(settings, "ingest", "strategies", "--json"))
    assert (second["events"], second["accepted"]) == (0, 0)


async def test_idempotency_key_returns_the_first_answer(settings, topics, tmp_path):
    await loaded(settings, tmp_path)
    async with projector(settings) as p:
        await run_to_end(p)
    async with client(settings) as c:
        path = "/v1/strategies/kelly-criterion:check"
        body = {"inputs": {"probability": "0.55", "price": "2.0"}}
        first = await c.post(path, json=body, headers={"Idempotency-Key": "order-1"})
        again = await c.post(path, json=body, headers={"Idempotency-Key": "order-1"})
        assert first.status_code == again.status_code == 200
        assert again.json() == first.json() and again.headers["idempotent-replayed"] == "true"
        assert "idempotent-replayed" not in first.headers
        other = await c.post(path, json={"inputs": {"probability": "0.6", "price": "2.0"}},
                             headers={"Idempotency-Key": "order-1"})
        assert (other.status_code, other.json()["code"], other.json()["param"]) == (422, "idempotency_key_reused",
                                                                                      "Idempotency-Key")
        # a problem is not kept: the key is free for the corrected request
        missing = await c.post(path, json={"inputs": {}}, headers={"Idempotency-Key": "order-2"})
        assert missing.status_code == 422
        fixed = await c.post(path, json=body, headers={"Idempotency-Key": "order-2"})
        assert fixed.status_code == 200
        bad = await c.post(path, json=body, headers={"Idempotency-Key": "spaces are not allowed"})
        assert bad.status_code == 400 and bad.json()["param"] == "Idempotency-Key"
        # a key in progress: another process claimed it and has not answered yet
        conn = await connect(settings.database_url)
        try:
            subject = await conn.fetchval("SELECT subject FROM access.idempotency_keys WHERE key = 'order-1'")
            digest = fingerprint("kelly-criterion:check",
                                 msgspec.json.encode(msgspec.convert(body, CheckRequest), order="deterministic"))
            await conn.execute("INSERT INTO access.idempotency_keys (subject, key, operation, fingerprint) "
                               "VALUES ($1, 'order-3', 'strategies.check', $2)", subject, digest)
        finally:
            await conn.close()
        busy = await c.post(path, json=body, headers={"Idempotency-Key": "order-3"})
        assert (busy.status_code, busy.json()["code"], busy.json()["retryable"]) == (409, "idempotency_in_progress", True)


async def test_the_cli_lists_shows_and_checks(settings, topics, tmp_path):
    import json

    await loaded(settings, tmp_path)
    async with projector(settings) as p:
        await run_to_end(p)
    listed = svc(settings, "strategies", "list", "--family", "B5", "--json")
    assert listed.returncode == 0, listed.stderr
    assert {s["id"] for s in json.loads(listed.stdout)["data"]} >= {"kelly-criterion", "fractional-kelly"}
    shown = svc(settings, "strategies", "show", "martingale")
    assert shown.returncode == 0 and "fractional-kelly" in shown.stdout and "myth" in shown.stdout
    checked = svc(settings, "strategies", "check", "two-way-arbitrage", "--format", "american",
                  "--input", "prices=171,-170", "--input", "stake=1000", "--json")
    assert checked.returncode == 0, checked.stderr
    result = json.loads(checked.stdout)
    assert result["route_taken"] == "execute" and any(f["id"] == "is_arbitrage" and f["value"] for f in result["figures"])
    missing = svc(settings, "strategies", "check", "kelly-criterion", "--input", "price=2.0")
    assert missing.returncode == 1 and "missing_execution_input (probability)" in missing.stderr.replace("\n", " ")


async def test_a_rule_that_depends_on_where_you_are_needs_your_jurisdiction(settings, topics, tmp_path):
    from ingest.library import ingest_library, library_root

    await loaded(settings, tmp_path)
    async with open_event_log(settings, "live") as log:
        await ingest_library(library_root(), log, settings)
    async with projector(settings) as p:
        await run_to_end(p)
    async with client(settings) as c:
        path = "/v1/strategies/licensed-books-only:check"
        missing = await c.post(path, json={})
        assert (missing.status_code, missing.json()["code"], missing.json()["param"]) == (422, "needs_jurisdiction", "jurisdiction")
        nj = (await c.post(path, json={"jurisdiction": "us-nj"})).json()
        assert nj["jurisdiction"] == "US-NJ" and nj["route_taken"] == "execute"
        assert "us-nj-sports-betting" in {r["slug"] for r in nj["rules"]}
        assert all(set(r["jurisdictions"]) & {"US-NJ", "US"} for r in nj["rules"]) and nj["rules"][0]["url"].startswith("/v1/reference/")
        nowhere = (await c.post(path, json={"jurisdiction": "ZZ"})).json()
        assert nowhere["rules"] == [] and "no law or policy entry" in nowhere["message"]
        bad = await c.post(path, json={"jurisdiction": "New Jersey"})
        assert bad.status_code == 400 and bad.json()["param"] == "jurisdiction"
