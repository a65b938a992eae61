"""`api.server:app` as the API benchmark serves it: the same app, with the Scale plan's rate
window and allowance lifted so that thousands of calls a second from one key are admitted
(and metered) rather than answered 429. Everything else, access checks included, is unchanged.

One route is added: `GET /v1/bench/constant`, a constant answer behind the same middleware, key
check, scope and metering as a read route (operation, scope and price as `GET /v1/games`): the
trivial baseline a read route's throughput and latency are compared with in the same run."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from litestar import get

from access import plans
from access.plans import READ_SCOPES

plans.PLANS["scale"] = dataclasses.replace(plans.PLANS["scale"], rate_limit=10**9, credits=10**12)

from api.server import app  # noqa: E402  (after the plan is lifted)


@get("/v1/bench/constant", opt={"operation": "bench.constant", "scope": READ_SCOPES["game"], "price": 1},
     include_in_schema=False)
async def constant() -> dict[str, bool]:
    return {"ok": True}


app.app.register(constant)  # the Litestar app behind the front door (api/front.py)

if os.environ.get("SVC_BENCH_LOOPWATCH"):  # where the loop is blocked, slice by slice (tests/perf/loop_watch.py)
    from tests.perf import loop_watch

    app.app.on_startup.append(lambda: loop_watch.start(Path(os.environ["SVC_BENCH_LOOPWATCH"])))

__all__ = ["app"]
