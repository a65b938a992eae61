"""Access decisions for one request: who calls, may they, how much is left. Framework-free.

Order (each step refuses with a problem, none costs credits): identify the caller (401), key
required (401), scope (403), rate window (429 `rate_limited`), credits (429 `quota_exhausted`).

Verified keys are cached in-process by their keyed hash (a key's plan, scopes and mode never
change; only revocation does). Revocations are announced by Postgres (`api/listen.py`): while
this process listens, a revoked key leaves the cache the moment the notification arrives, so a
cached key is trusted without a query. While it does not (not yet connected, connection lost),
every call of a cached key checks the key in the database, and a refusal (403, 429) re-reads the
key first, as before notifications: a revocation is never missed.

Credits are charged against per-process leases (`access/leases.py`): a block of the
allowance reserved in Postgres with one capped statement, spent here call by call.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
from collections import OrderedDict
from datetime import datetime, timezone
from typing import TYPE_CHECKING

import asyncpg
import structlog

from access.address import address_subject, client_address, forwarding_chain, trusted_networks
from access.context import Caller, CreditState, credit_state
from access.credits import CreditMeter, KeyRevoked
from access.leases import Lease, block_cap
from access.headers import access_headers, retry_after
from access.keys import bearer_token
from access.limiter import Windows
from access.periods import Period, billing_period, day_period
from access.plans import KEY_ONLY_SCOPES, PLANS
from access.store import KeyRecord, verify_key
from access.window import RatePolicy, RateState, rate_state
from api.problems import ProblemError
from infra.db import DATABASE_DOWN
from infra.settings import Settings

if TYPE_CHECKING:
    from api.listen import Listener

log = structlog.get_logger("api.access")
DB_TIMEOUT = 5.0  # seconds; past it a request is refused with service_unavailable
KEY_CACHE_SIZE = 10_000
KEY_CACHE_SECONDS = 300.0  # re-read a key from the database at least this often anyway
LEASE_SWEEP_SECONDS = 10.0  # how often idle leases are looked for (and returned)
LeaseKey = tuple[str, str, str]  # subject, mode, period label


def _unavailable(what: str) -> ProblemError:
    return ProblemError("service_unavailable", f"{what} cannot be checked right now; retry shortly.")


def _unauthenticated(detail: str) -> ProblemError:
    return ProblemError("unauthenticated", detail, param="Authorization")


class AccessService:
    def __init__(
        self, settings: Settings, pool: asyncpg.Pool | None, redis=None, windows: Windows | None = None,
        listener: Listener | None = None,
    ) -> None:
        self.secret = settings.secret().encode()  # keyed hashes of keys, addresses and wire tickets
        self._proxies = trusted_networks(settings.trusted_proxies)
        self._pool = pool
        self.windows = windows or Windows(redis, prefix=f"svc:{settings.topic_namespace}rl:")
        self.meter = CreditMeter(pool) if pool is not None else None
        self._cache_secret = hashlib.blake2b(self.secret, digest_size=32).digest()
        # verified keys by a keyed hash of the key: when read, the record, the caller it makes
        self._keys: OrderedDict[bytes, tuple[float, KeyRecord, Caller]] = OrderedDict()
        self._listener = listener
        self._revocations = 0  # revocations heard (and reconnections): a read older than one is not cached
        if listener is not None:
            listener.on_connected.append(self.forget_keys)  # cached before listening: unknown since
            listener.on_key_revoked.append(self.forget_key)
        self._leases: dict[LeaseKey, Lease] = {}
        self._granting: dict[LeaseKey, asyncio.Lock] = {}
        self._sweeper: asyncio.Task | None = None
        self._topping_up: set[LeaseKey] = set()
        self._top_ups: set[asyncio.Task] = set()
        self._periods: dict[int | None, Period] = {}  # the current period by billing anchor day
        self._policies: dict[str, RatePolicy] = {}  # by plan name

    def revocations_heard(self) -> bool:
        """Whether a revocation reaches this process as it happens (else: check keys per call)."""
        return self._listener is not None and self._listener.connected

    def forget_key(self, key_id: str) -> None:
        """A revoked key leaves the cache (the notification listener calls this)."""
        self._revocations += 1
        for digest in [d for d, (_, record, _) in self._keys.items() if record.key_id == key_id]:
            del self._keys[digest]

    def forget_keys(self) -> None:
        self._revocations += 1
        self._keys.clear()

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
        # the cache's own keyed hash: a third of HMAC-SHA256's cost, on every keyed call
        digest = hashlib.blake2b(token.encode(), key=self._cache_secret, digest_size=16).digest()
        cached = self._keys.get(digest)
        if cached is not None and time.monotonic() - cached[0] < KEY_CACHE_SECONDS:
            return cached[2]
        revocations = self._revocations
        record = await self._read_key(token)
        if record is None:
            self._keys.pop(digest, None)
            raise _unauthenticated("The API key is not valid: unknown, revoked or malformed.")
        if self._revocations == revocations:  # else the read may predate a revocation heard meanwhile
            self._keys[digest] = (time.monotonic(), record, _key_caller(record, cached=True))
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
        except DATABASE_DOWN:
            raise _unavailable("API keys") from None

    def _forget(self, caller: Caller) -> ProblemError:
        """Drop a caller's key from the cache; the 401 to answer with."""
        if caller.key_id is not None:
            self.forget_key(caller.key_id)
        return _unauthenticated("The API key is not valid: unknown, revoked or malformed.")

    def _unheard_key(self, caller: Caller) -> str | None:
        """The key ID to check in the database with this call: a cached key whose revocation
        this process would not hear of right now."""
        return caller.key_id if caller.cached and not self.revocations_heard() else None

    async def confirm(self, caller: Caller, authorization: str | None) -> None:
        """Before refusing a cached caller for another reason, make sure the key still stands
        (a revoked key is 401, whatever else is wrong with the call)."""
        if self._unheard_key(caller) is None:
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
        policy = self._policies.get(caller.plan)
        if policy is None:
            policy = self._policies[caller.plan] = RatePolicy(plan.name, plan.rate_limit, plan.rate_window)
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

    def _period_at(self, caller: Caller, wall: float) -> Period:
        anchor = caller.billing_anchor_day
        period = self._periods.get(anchor)
        if period is None or not period.start_ts <= wall < period.end_ts:
            period = self._periods[anchor] = self.period(caller, datetime.fromtimestamp(wall, timezone.utc))
        return period

    async def reserve(self, caller: Caller, price: int, rate: RateState, now: datetime | None = None) -> CreditState | None:
        """Charge `price` before the call runs (0: just read); None without a database."""
        if self.meter is None:
            return None
        wall = time.time() if now is None else now.timestamp()
        period = self._period_at(caller, wall)
        allowance = PLANS[caller.plan].credits
        key_id = self._unheard_key(caller)
        lease_key = (caller.subject, caller.mode, period.label)
        try:
            if price <= 0:
                charged, used = False, await self._used(lease_key, key_id)
            elif block_cap(allowance) == 1:  # small allowances: every call charged in Postgres
                async with asyncio.timeout(DB_TIMEOUT):
                    charged, used = await self.meter.charge(*lease_key, price, allowance, key_id)
            else:
                if key_id is not None:
                    async with asyncio.timeout(DB_TIMEOUT):
                        await self.meter.used(*lease_key, key_id)  # raises KeyRevoked
                charged, used = await self._spend(lease_key, price, allowance)
        except KeyRevoked:
            raise self._forget(caller) from None
        except DATABASE_DOWN:
            raise _unavailable("Credits") from None
        credits = credit_state(allowance, used, price if charged else 0, period, wall)
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

    async def _used(self, lease_key: LeaseKey, key_id: str | None) -> int:
        """Used so far by the subject, as this process knows it (no query when it holds a lease)."""
        lease = self._leases.get(lease_key)
        if lease is not None and key_id is None:
            return lease.used
        assert self.meter is not None
        async with asyncio.timeout(DB_TIMEOUT):
            durable = await self.meter.used(*lease_key, key_id)
        return durable - (lease.remaining if lease is not None else 0)

    async def _spend(self, lease_key: LeaseKey, price: int, allowance: int) -> tuple[bool, int]:
        """Charge against this process's lease, taking a new block when it runs short:
        (charged, used after this call)."""
        lease = self._leases.get(lease_key)
        if lease is not None and lease.spend(price, time.monotonic()):
            if lease.running_low() and lease_key not in self._topping_up:
                self._top_up_later(lease_key, allowance)
            return True, lease.used  # the hot path: no await at all
        while True:
            lock = self._granting.setdefault(lease_key, asyncio.Lock())
            async with lock:  # one grant in flight per lease; the calls waiting on it spend from it
                if self._granting.get(lease_key) is not lock:
                    continue  # the lease was returned meanwhile: start again
                lease = self._leases.get(lease_key)
                if lease is None:
                    lease = self._leases[lease_key] = Lease(touched_at=time.monotonic())
                if lease.spend(price, time.monotonic()):
                    return True, lease.used
                want = lease.want(price, allowance, time.monotonic())
                assert self.meter is not None
                async with asyncio.timeout(DB_TIMEOUT):
                    granted, durable = await self.meter.take(*lease_key, price - lease.remaining, want, allowance)
                if not granted:
                    lease.durable_used = durable
                    return False, lease.used
                lease.granted(granted, durable, time.monotonic())
                lease.spend(price, time.monotonic())
            self._sweep_later()
            return True, lease.used

    def _top_up_later(self, lease_key: LeaseKey, allowance: int) -> None:
        """A busy lease takes its next block before it runs dry, so no call waits for the grant."""
        self._topping_up.add(lease_key)

        async def top_up() -> None:
            try:
                lock = self._granting.setdefault(lease_key, asyncio.Lock())
                async with lock:
                    lease = self._leases.get(lease_key)
                    if self._granting.get(lease_key) is not lock or lease is None or not lease.running_low():
                        return
                    want = lease.want(0, allowance, time.monotonic())
                    assert self.meter is not None
                    async with asyncio.timeout(DB_TIMEOUT):
                        granted, durable = await self.meter.take(*lease_key, 1, want, allowance)
                    if granted:
                        lease.granted(granted, durable, time.monotonic())
            except Exception as exc:  # the next call that finds the lease short takes the block itself
                log.warning("credit lease not topped up", error=repr(exc))
            finally:
                self._topping_up.discard(lease_key)

        self._top_ups.add(task := asyncio.get_running_loop().create_task(top_up()))
        task.add_done_callback(self._top_ups.discard)

    async def refund(self, caller: Caller, credits: CreditState) -> CreditState:
        """Give back what `reserve` charged (the response was not 2xx)."""
        assert self.meter is not None
        lease = self._leases.get((caller.subject, caller.mode, credits.period.label))
        if lease is not None:
            lease.give_back(credits.last, time.monotonic())
            used = lease.used
        else:
            async with asyncio.timeout(DB_TIMEOUT):
                used = await self.meter.refund(caller.subject, caller.mode, credits.period.label, credits.last)
        return credit_state(credits.allowance, used, 0, credits.period, time.time())

    # ---- leases: returned when idle and on shutdown -------------------------------------------

    def _sweep_later(self) -> None:
        if self._sweeper is None or self._sweeper.done():
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep_idle())

    async def _sweep_idle(self) -> None:
        while self._leases:
            await asyncio.sleep(LEASE_SWEEP_SECONDS)
            now = time.monotonic()
            for lease_key in [k for k, lease in self._leases.items() if lease.idle(now)]:
                try:
                    await self._return(lease_key)
                except Exception as exc:  # kept, and tried again at the next sweep or at shutdown
                    log.warning("idle credit lease not returned", error=repr(exc))

    async def _return(self, lease_key: LeaseKey) -> None:
        lock = self._granting.setdefault(lease_key, asyncio.Lock())
        async with lock:
            if self._granting.get(lease_key) is not lock:
                return  # returned by another call meanwhile
            # detached before any await: calls from here on never spend what is being returned
            lease = self._leases.pop(lease_key, None)
            del self._granting[lease_key]  # waiters on this lock see it is gone and start again
            unspent = 0
            if lease is not None:
                unspent, lease.remaining = lease.remaining, 0
            if unspent and self.meter is not None:  # on failure they stay counted as used
                async with asyncio.timeout(DB_TIMEOUT):
                    await self.meter.refund(*lease_key, unspent)

    async def aclose(self) -> None:
        """Return every unspent credit (the app's lifespan calls this at shutdown)."""
        await asyncio.gather(*self._top_ups, return_exceptions=True)  # grants in flight land first
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        for lease_key in list(self._leases):
            try:
                await self._return(lease_key)
            except Exception as exc:  # that lease's unspent credits stay counted as used
                log.warning("credit lease not returned at shutdown", error=repr(exc))


def _key_caller(record: KeyRecord, cached: bool) -> Caller:
    return Caller(
        credential="key", mode=record.mode, plan=record.plan, account_id=record.account_id,  # type: ignore[arg-type]
        key_id=record.key_id, scopes=frozenset(record.scopes), subject=record.account_id,
        billing_anchor_day=record.billing_anchor_day, cached=cached,
    )
