"""Access control around every routed request (keys, scopes, rate limits, credits, dataset).

Until keys exist every caller is anonymous and reads the live dataset.
"""

from __future__ import annotations

from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Receive, Scope, Send


class AccessMiddleware(ASGIMiddleware):
    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        scope.setdefault("state", {})
        scope["state"].setdefault("dataset", "live")
        await next_app(scope, receive, send)
