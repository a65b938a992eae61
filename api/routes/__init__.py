"""Route modules. Every module here exposing `ROUTES` (a list of handlers, controllers or routers)
is mounted by `api.app.create_app`; adding a file adds its routes.

Each HTTP handler declares what access control needs in `opt`:
    opt={"operation": "games.list", "scope": "read:odds", "price": 1}
`operation` names the operation (rate-limit resource, metering), `scope` the scope a key must
hold (None: no scope needed), `price` its credits. Handlers without `operation` are
not metered (docs, metrics). An operation that key-less callers may not reach (answers, wire
tickets) adds `"credential": "key"`; routes read the caller with `access.context.access_of`.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any


def discover() -> list[Any]:
    handlers: list[Any] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        handlers.extend(getattr(module, "ROUTES", []))
    return handlers
