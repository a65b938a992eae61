"""Pure code imports no I/O library: ingest adapters, identity rules and the simulation, the
Wire's rules, the API's access rules and the projections' reducers, consensus and odds maths
are testable (and replayable) without a broker or a database."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PURE = [
    "ingest.team_aliases", "ingest.identity", "ingest.records", "ingest.resolution", "ingest.csv_rows",
    "ingest.prices", "ingest.nflverse_games", "ingest.nflverse_player_stats", "ingest.nflverse_injuries",
    "ingest.odds_api", "ingest.batches", "ingest.pacing", "ingest.summary", "ingest.sandbox.books",
    "ingest.sandbox.templates", "ingest.sandbox.simulation", "ingest.sandbox.day",
]
IO = ("aiokafka", "asyncpg", "faust", "litestar", "redis", "httpx", "rocksdict")
# the Wire's rules (topics, snapshots, resume window, framing, messages, feed); only the fan-out
# (aiokafka), tickets, sessions and connection counts (asyncpg) and the routes touch I/O
WIRE_PURE = ["wire.topics", "wire.snapshots", "wire.recent", "wire.sse", "wire.messages", "wire.feed", "schemas.wire",
             "schemas.asyncapi"]


# the API's rules: plans, windows, periods, key format, headers, credit leases, change counters,
# kept responses; the adapters (store, credits, limiter, listener, middleware) touch I/O
API_PURE = ["api.access.plans", "api.access.window", "api.access.periods", "api.access.keys", "api.access.headers",
            "api.access.context", "api.access.address", "api.access.leases", "api.changes", "api.kept",
            "infra.channels"]


# the projections' rules: state, reducers, consensus and odds maths, deltas, rows, the batch
# core and the schemas they fold; the drivers (faust app, writer, cache, replay) touch I/O
PROJECTIONS_PURE = [
    "projections.state", "projections.lines", "projections.consensus", "projections.reducers",
    "projections.reducers.markets", "projections.reducers.games", "projections.reducers.players",
    "projections.reducers.teams", "projections.deltas", "projections.rows", "projections.batch",
    "projections.quotes", "projections.event_time", "projections.assemble", "projections.season_lines",
    "projections.search_terms", "projections.odds.devig", "projections.odds.bets", "projections.odds.cards",
    "projections.odds.middles", "projections.odds.prices", "projections.odds.exact", "projections.odds.devig_exact",
    "schemas.events", "schemas.ids", "schemas.natural_keys",
]


@pytest.mark.parametrize("modules", [PURE, WIRE_PURE, API_PURE, PROJECTIONS_PURE],
                         ids=["ingest", "wire", "api", "projections"])
def test_pure_modules_import_no_io_library(modules):
    code = (
        "import sys\n"
        f"for m in {modules!r}: __import__(m)\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {IO!r}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert out.strip() == "[]"
