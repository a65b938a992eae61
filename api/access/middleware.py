"""Access control around every routed request: keys, scopes, rate windows, credits, dataset.

Runs after routing, so each operation's `opt` (`operation`, `scope`, `price`, optional
`credential: "key"`) is known. Handlers without `operation` (docs, metrics) and unmetered
operations (health) pass untouched and read `live`. A refusal raises a problem, answered by the
app's exception handlers. Only 2xx responses are charged: the price is reserved before the
handler runs and given back when the response turns out otherwise (or never starts).
"""

from __future__ import annotations

import structlog
from litestar.enums import ScopeType
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from access.address import forwarding_chain, header_value
from access.context import Access
from access.headers import access_fields
from access.plans import UNMETERED_OPERATIONS
from api.access.service import AccessService
from api.problems import ProblemError

log = structlog.get_logger("api.access")


def service_for(scope: Scope) -> AccessService:
    """One AccessService per app, made on first use (the lifespan has opened pool and Redis by then)."""
    app_state = scope["litestar_app"].state.app_state
    service = app_state.extras.get("access")
    if service is None:
        service = app_state.extras["access"] = AccessService(
            app_state.settings, app_state.pool, app_state.redis, listener=app_state.listener,
        )
    return service


class AccessMiddleware(ASGIMiddleware):
    scopes = (ScopeType.HTTP,)
    _service: AccessService | None = None

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        state = scope.setdefault("state", {})
        state["dataset"] = "live"
        opt = scope["route_handler"].opt
        operation = opt.get("operation")
        if operation is None or operation in UNMETERED_OPERATIONS:
            await next_app(scope, receive, send)
            return

        service = self._service or service_for(scope)
        self._service = service  # one app per middleware instance, one service per app
        client = scope.get("client")
        authorization = header_value(scope, b"authorization")
        # only a key-less caller is known by its address: keyed calls skip the forwarding headers
        caller = await service.identify(
            authorization, client[0] if client else None, None if authorization else forwarding_chain(scope)
        )
        state["dataset"] = caller.mode
        try:
            service.authorize(caller, operation, opt.get("scope"), opt.get("credential"))
            rate = await service.count_call(caller, operation)
        except ProblemError:
            await service.confirm(caller, authorization)  # a revoked key is 401 first
            raise
        price = int(opt.get("price") or 0)
        access = Access(caller=caller, operation=operation, rate=rate, credits=await service.reserve(caller, price, rate))
        state["access"] = access
        started = False

        async def send_with_access(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                if access.credits is not None and access.credits.last and not 200 <= message["status"] < 300:
                    await self._refund(service, access)
                extra = access_fields(caller.plan, access.rate, access.credits)  # type: ignore[arg-type]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        try:
            await next_app(scope, receive, send_with_access)
        finally:
            if not started and access.credits is not None and access.credits.last:
                await self._refund(service, access)  # no response at all: nothing to charge for

    @staticmethod
    async def _refund(service: AccessService, access: Access) -> None:
        try:
            access.credits = await service.refund(access.caller, access.credits)  # type: ignore[arg-type]
        except Exception as exc:  # the charge stands; the response must still go out
            log.warning("credit refund failed", operation=access.operation, error=type(exc).__name__)
