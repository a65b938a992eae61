"""Access decisions for one request: who calls, may they, how much is left. Framework-free.

Order (each step refuses with a problem, none costs credits): identify the caller (401), key
required (401), scope (403), rate window (429 `rate_limited`), credits (429 `quota_exhausted`).

Verified keys are cached in-process by their keyed hash (a key's plan, scopes and mode never
change; only revocation does). A cached caller is never trusted past the database: the credit
statement every metered call runs also checks the key is unrevoked, and a refusal (403, 429)
re-reads the key first, so a revoked key gets 401 on its very next call, as before the cache.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from datetime import datetime, timezone

import asyncpg

from api.access.address import address_subject, client_address, forwarding_chain, trusted_networks
from api.access.context import Caller, CreditState, credit_state
from api.access.credits import CreditMeter, KeyRevoked
from api.access.headers import access_headers, retry_after
from api.access.keys import bearer_token, key_digest
from api.access.limiter import Windows
from api.access.periods import Period, billing_period, day_period
from api.access.plans import KEY_ONLY_SCOPES, PLANS
from api.access.store import KeyRecord, verify_key
from api.access.window import RatePolicy, RateState, rate_state
from api.problems import ProblemError
from infra.settings import Settings

DB_TIMEOUT = 5.0  # seconds; past it a request is refused with service_unavailable
KEY_CACHE_SIZE = 10_000
KEY_CACHE_SECONDS = 300.0  # re-read a key from the database at least this often anyway
# a database that fails this way is `service_unavailable`, never a 500
DB_ERRORS = (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError)


def _unavailable(what: str) -> ProblemError:
    return ProblemError("service_unavailable", f"{what} cannot be checked right now; retry shortly.")


def _unauthenticated(detail: str) -> ProblemError:
    return ProblemError("unauthenticated", detail, param="Authorization")


class AccessService:
    def __init__(self, settings: Settings, pool: asyncpg.Pool | None, redis=None, windows: Windows | None = None) -> None:
        self.secret = settings.secret().encode()  # keyed hashes of keys, addresses and wire tickets
        self._proxies = trusted_networks(settings.trusted_proxies)
        self._pool = pool
        self.windows = windows or Windows(redis, prefix=f"svc:{settings.topic_namespace}rl:")
        self.meter = CreditMeter(pool) if pool is not None else None
        self._keys: OrderedDict[bytes, tuple[float, KeyRecord]] = OrderedDict()  # by keyed hash

    async def identify(self, authorization: str | None, host: str | None, forwarded_for: str | None = None) -> Caller:
        """The caller of a request from `host` (the socket peer) with these headers."""
        token = bearer_token(authorization)
        if token is None:
            if authorization is not None:
                raise _unauthenticated("Send the API key as 'Authorization: Bearer <key>'.")
            return Caller(
                credential="anonymous", mode="live", plan="anonymous", account_id=None, key_id=None,
                scopes=frozenset(), subject=self.address_of(host, forwarded_for),
            )
        digest = key_digest(self.secret, token)
        cached = self._keys.get(digest)
        if cached is not None and time.monotonic() - cached[0] < KEY_CACHE_SECONDS:
            return _key_caller(cached[1], cached=True)
        record = await self._read_key(token)
        if record is None:
            self._keys.pop(digest, None)
            raise _unauthenticated("The API key is not valid: unknown, revoked or malformed.")
        self._keys[digest] = (time.monotonic(), record)
        self._keys.move_to_end(digest)
        while len(self._keys) > KEY_CACHE_SIZE:
            self._keys.popitem(last=False)
        return _key_caller(record, cached=False)

    def address_of(self, host: str | None, forwarded_for: str | None) -> str:
        """The subject a key-less caller's windows are kept under: a keyed hash of its address."""
        return address_subject(self.secret, client_address(host, forwarded_for, self._proxies))

    def address_of_scope(self, scope) -> str:
        """`address_of` the ASGI connection (HTTP or WebSocket) in `scope`."""
        client = scope.get("client")
        return self.address_of(client[0] if client else None, forwarding_chain(scope))

    async def _read_key(self, token: str) -> KeyRecord | None:
        if self._pool is None:
            raise _unavailable("API keys")
        try:
            async with asyncio.timeout(DB_TIMEOUT), self._pool.acquire() as conn:
                return await verify_key(conn, self.secret, token)
        except DB_ERRORS:
            raise _unavailable("API keys") from None

    def _forget(self, caller: Caller) -> ProblemError:
        """Drop a caller's key from the cache; the 401 to answer with."""
        for digest, (_, record) in list(self._keys.items()):
            if record.key_id == caller.key_id:
                del self._keys[digest]
        return _unauthenticated("The API key is not valid: unknown, revoked or malformed.")

    async def confirm(self, caller: Caller, authorization: str | None) -> None:
        """Before refusing a cached caller for another reason, make sure the key still stands
        (a revoked key is 401, whatever else is wrong with the call)."""
        if not caller.cached:
            return
        token = bearer_token(authorization)
        if token is None or await self._read_key(token) is None:
            raise self._forget(caller)

    @staticmethod
    def authorize(caller: Caller, operation: str, scope: str | None, credential: str | None) -> None:
        needs_key = credential == "key" or (scope is not None and scope in KEY_ONLY_SCOPES)
        if caller.credential == "anonymous":
            if needs_key:
                raise _unauthenticated(f"'{operation}' needs an API key: send 'Authorization: Bearer <key>'.")
            return
        if scope is not None and scope not in caller.scopes:
            raise ProblemError(
                "insufficient_scope", f"This key lacks the scope '{scope}' that '{operation}' needs.", param=scope
            )

    async def count_call(self, caller: Caller, operation: str) -> RateState:
        plan = PLANS[caller.plan]
        policy = RatePolicy(plan.name, plan.rate_limit, plan.rate_window)
        if plan.rate_per_operation:
            key, resource = f"{caller.subject}:{operation}", operation
        else:
            key, resource = f"{caller.subject}:{caller.mode}", "all"
        rate = rate_state(policy, resource, await self.windows.hit(key, policy))
        if not rate.allowed:
            raise ProblemError(
                "rate_limited",
                f"Rate limit reached: {policy.limit} calls per {policy.window} s ({resource}). "
                f"Retry in {max(1, rate.reset_after)} s.",
                headers=dict([*access_headers(caller.plan, rate, None), retry_after(rate.reset_after)]),
                retryable=True,
            )
        return rate

    def period(self, caller: Caller, now: datetime) -> Period:
        if caller.billing_anchor_day is None:
            return day_period(now)
        return billing_period(now, caller.billing_anchor_day)

    async def reserve(self, caller: Caller, price: int, rate: RateState, now: datetime | None = None) -> CreditState | None:
        """Charge `price` before the call runs (0: just read); None without a database."""
        if self.meter is None:
            return None
        now = now or datetime.now(timezone.utc)
        period = self.period(caller, now)
        allowance = PLANS[caller.plan].credits
        try:
            async with asyncio.timeout(DB_TIMEOUT):
                key_id = caller.key_id if caller.cached else None
                if price <= 0:
                    charged, used = False, await self.meter.used(caller.subject, caller.mode, period.label, key_id)
                else:
                    charged, used = await self.meter.charge(
                        caller.subject, caller.mode, period.label, price, allowance, key_id
                    )
        except KeyRevoked:
            raise self._forget(caller) from None
        except DB_ERRORS:
            raise _unavailable("Credits") from None
        credits = credit_state(allowance, used, price if charged else 0, period, now)
        if price > 0 and not charged:
            raise ProblemError(
                "quota_exhausted",
                f"The {allowance}-credit allowance of period {period.label} is used up; "
                f"it resets at {period.end.isoformat().replace('+00:00', 'Z')}.",
                headers=dict([
                    *access_headers(caller.plan, rate, credits),
                    retry_after(max(credits.reset_after, rate.reset_after)),
                ]),
                retryable=False,
            )
        return credits

    async def refund(self, caller: Caller, credits: CreditState) -> CreditState:
        """Give back what `reserve` charged (the response was not 2xx)."""
        assert self.meter is not None
        async with asyncio.timeout(DB_TIMEOUT):
            used = await self.meter.refund(caller.subject, caller.mode, credits.period.label, credits.last)
        return credit_state(credits.allowance, used, 0, credits.period, datetime.now(timezone.utc))


def _key_caller(record: KeyRecord, cached: bool) -> Caller:
    return Caller(
        credential="key", mode=record.mode, plan=record.plan, account_id=record.account_id,  # type: ignore[arg-type]
        key_id=record.key_id, scopes=frozenset(record.scopes), subject=record.account_id,
        billing_anchor_day=record.billing_anchor_day, cached=cached,
    )
