"""`api.server:app` as the API benchmark serves it: the same app, with the Scale plan's rate
window and allowance lifted so that thousands of calls a second from one key are admitted
(and metered) rather than answered 429. Everything else, access checks included, is unchanged."""

from __future__ import annotations

import dataclasses

from access import plans

plans.PLANS["scale"] = dataclasses.replace(plans.PLANS["scale"], rate_limit=10**9, credits=10**12)

from api.server import app  # noqa: E402  (after the plan is lifted)

__all__ = ["app"]
