"""What the Wire's two doors (the SSE stream and the socket) share: the process's fan-out,
snapshots read from the read models, tickets, and the per-address and per-account limits."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from types import EllipsisType
from typing import Any
from urllib.parse import urlsplit

import asyncpg
import msgspec
import structlog

from access.address import header_value
from access.headers import retry_after
from access.plans import PLANS, topic_scope
from api.access.service import AccessService
from access.window import RatePolicy, rate_state
from api.conventions import RG_LINE
from api.problems import ProblemError
from api.queries import wire as wire_sql
from infra.db import DATABASE_DOWN
from api.resources.freshness import game_stale_after_ms, market_stale_after_ms
from api.answers import store as answer_store
from api.answers.live import DELTA_TYPE as ANSWER_DELTA, LiveAnswers
from schemas.datasets import pg_schema
from schemas.wire import TOPIC_KINDS, SnapshotEnvelope
from api.wire_live import WIRE_SCOPE, live_connections  # noqa: F401 (the routes import it from here)
from wire.fanout import Delta, DeltaFanout
from wire.feed import FeedBook, Fresh
from wire.limits import OpenConnections
from wire.presence import Presence
from wire.messages import Feed
from wire.snapshots import freshness, game_snapshot, market_snapshot
from wire.origins import Origins, normalised
from wire.sessions import Session, SessionStore
from wire.tickets import TicketGrant, redeem_ticket, ticket_kind

log = structlog.get_logger("api.wire")
ATTEMPTS = RatePolicy("wire", 30, 60)  # connection attempts per address
TABLES = {"game": "games", "market": "markets"}  # the read-model topic kinds, and their tables
SERVED_KINDS = TOPIC_KINDS  # those and `answer:` (access.answers, api.answers.live)
DRAIN_NOTICE_SECONDS = 30  # the drain notice comes 30 s before a connection's end
PRESENCE_WAIT_SECONDS = 5.0  # the first Wire connection of a process waits this long for its presence lock
STOP_GRACE_SECONDS = 3.0  # a stopping process waits this long for its Wire connections to close
encode = msgspec.json.Encoder(decimal_format="number").encode


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def _unavailable(what: str) -> ProblemError:
    return ProblemError("service_unavailable", f"{what} not reachable right now; retry shortly.")


async def fanout_of(app_state: Any) -> DeltaFanout:
    """The process's fan-out, started on first use."""
    fanout = app_state.extras.get("fanout")
    if fanout is None:
        fanout = app_state.extras["fanout"] = DeltaFanout(app_state.settings)
        if app_state.pool is not None:  # answer topics followed here are re-derived here
            app_state.extras["live_answers"] = LiveAnswers(app_state.pool, fanout, app_state.settings)
    try:
        await asyncio.wait_for(fanout.start(), 15)
    except Exception as exc:
        log.warning("wire fan-out cannot start", error=repr(exc))
        raise _unavailable("Live updates are") from None
    return fanout


async def process_number(app_state: Any) -> int:
    """This process's number on the Wire (`wire.presence`), once its presence lock is held."""
    if not app_state.settings.database_url:
        raise _unavailable("Wire connections are")
    presence = app_state.extras.get("presence")
    if presence is None:
        presence = app_state.extras["presence"] = Presence(app_state.settings.database_url)
    if not presence.ready and not await presence.start(PRESENCE_WAIT_SECONDS):
        raise _unavailable("Wire connections are")
    return presence.number


async def count_in(app_state: Any, address: str, grant: TicketGrant) -> tuple[OpenConnections, str]:
    """Count a new connection of `address` and the grant's account in, across API processes; 429
    past the per-address or the plan's limit. Returns the registry and the connection's ID."""
    if app_state.pool is None:
        raise _unavailable("Wire connections are")
    process = await process_number(app_state)
    connections = app_state.extras.get("open_connections")
    if connections is None:  # a row unrefreshed for three pings was never counted out
        stale = 3 * app_state.settings.wire_ping_seconds + 5
        connections = app_state.extras["open_connections"] = OpenConnections(app_state.pool, stale)
    try:
        connection_id, refused = await connections.open(address, grant.account_id,
                                                        PLANS[grant.plan].wire_connections, process)
    except DATABASE_DOWN:
        raise _unavailable("Wire connections are") from None
    if refused is not None:
        raise ProblemError("rate_limited", f"Too many open connections: {refused}.", retryable=True,
                           headers=dict([retry_after(1)]))
    return connections, connection_id


_counting_out: set[asyncio.Task] = set()


def count_out(connections: OpenConnections, connection_id: str) -> None:
    """Count a connection out, in a task of its own: this runs in `finally` blocks of handlers
    being cancelled or closed, where an await may not complete."""

    async def close() -> None:
        try:
            await connections.close(connection_id)
        except Exception as exc:  # the row goes stale and stops counting on its own
            log.warning("wire connection not counted out", error=repr(exc))

    task = asyncio.get_running_loop().create_task(close())
    _counting_out.add(task)
    task.add_done_callback(_counting_out.discard)


def detach_later(sessions: SessionStore, session: Session) -> None:
    """Mark a session dropped (resumable for 120 s), in a task of its own, like `count_out`."""

    async def detach() -> None:
        try:
            await sessions.detach(session)
        except Exception as exc:  # its process's heartbeat stands in for it
            log.warning("wire session not detached", error=repr(exc))

    task = asyncio.get_running_loop().create_task(detach())
    _counting_out.add(task)
    task.add_done_callback(_counting_out.discard)


def still_open(connections: OpenConnections, connection_id: str) -> None:
    """Refresh the connection's row (with this process's others, within a second)."""
    connections.seen_soon(connection_id)


async def admit_attempt(service: AccessService, address: str) -> None:
    """Count a connection attempt of `address`; 429 past 30 in 60 s."""
    state = rate_state(ATTEMPTS, "wire", await service.windows.hit(f"{address}:wire", ATTEMPTS))
    if not state.allowed:
        raise ProblemError(
            "rate_limited", f"At most {ATTEMPTS.limit} Wire connection attempts per {ATTEMPTS.window} s per address.",
            headers=dict([retry_after(state.reset_after)]), retryable=True,
        )


def wire_origins(settings: Any, scope: Any = None) -> Origins:
    """Which browser origins may use which kind of ticket (`wire.origins`); with the connection's
    `scope`, the API's own origin may use `session` tickets (the first-party page, `api/routes/site.py`)."""
    origins = Origins.of(settings.wire_origins, settings.wire_first_party_origins, settings.wire_card_origins)
    return origins if scope is None else origins.with_own(own_origins(settings, scope))


def own_origins(settings: Any, scope: Any) -> frozenset[str]:
    """The API's own origin as a browser names it: `SVC_PUBLIC_URL`'s when set, and the one this
    connection came to (its `Host`, https for a TLS connection)."""
    found = set()
    if settings.public_url:
        found.add(origin_of_url(settings.public_url))
    host = header_value(scope, b"host")
    if host:
        secure = scope.get("scheme") in ("https", "wss")
        found.add(normalised(f"{'https' if secure else 'http'}://{host}"))
    return frozenset(found)


def origin_of_url(url: str) -> str:
    """`https://api.example.com/base` -> `https://api.example.com`."""
    parts = urlsplit(url)
    return normalised(f"{parts.scheme}://{parts.netloc}")


async def peek_kind(pool: asyncpg.Pool | None, service: AccessService, ticket: str) -> str | None:
    """The kind of an unused ticket, not using it; None when unknown (redeeming it will say why)."""
    if pool is None:
        return None
    try:
        async with pool.acquire() as conn:
            return await ticket_kind(conn, service.secret, ticket)
    except DATABASE_DOWN:
        raise _unavailable("Wire tickets are") from None


async def redeem(pool: asyncpg.Pool | None, service: AccessService, ticket: str, transport: str) -> TicketGrant:
    if pool is None:
        raise _unavailable("Wire tickets are")
    try:
        async with pool.acquire() as conn:
            grant = await redeem_ticket(conn, service.secret, ticket, transport)
    except DATABASE_DOWN:
        raise _unavailable("Wire tickets are") from None
    if grant is None:
        raise ProblemError("unauthenticated", "The ticket is not valid: unknown, expired, already used, or minted "
                                              f"for the {'socket' if transport == 'sse' else 'stream'}.", param="ticket")
    if WIRE_SCOPE not in grant.scopes:
        raise ProblemError("insufficient_scope", f"The key that minted this ticket lacks the scope '{WIRE_SCOPE}'.",
                           param=WIRE_SCOPE)
    return grant


def topic_refusal(grant: TicketGrant, topic: str) -> tuple[str, str] | None:
    """Why this grant may not open `topic` (`not_entitled`: the ticket does not name it,
    or the key lacks the scope its REST twin needs), as (scope or None, detail); None: it may."""
    if grant.topics is not None and topic not in grant.topics:
        return None, f"The ticket does not name {topic}."
    scope = topic_scope(topic)
    if scope is not None and scope not in grant.scopes:
        return scope, f"The key lacks the scope '{scope}' that {topic.partition(':')[0]} topics need."
    return None


class Snapshot(msgspec.Struct):
    seq: int
    payload: bytes
    fresh: Fresh  # what its expected latency and liveness follow from (for `feed`)


def owner_of(grant: TicketGrant) -> str:
    """Whose answers a grant may follow: the same key mode and account that asked (as GET /v1/answers)."""
    return f"{grant.mode}:{grant.account_id}"


async def read_snapshot(pool: asyncpg.Pool | None, dataset: str, topic: str, owner: str) -> Snapshot | None:
    """The topic's state and last seq, from one consistent read; None when it does not exist (or
    is an answer of someone else's)."""
    try:
        return await _read_snapshot(pool, dataset, topic, owner)
    except DATABASE_DOWN:
        raise _unavailable("The read models are") from None


async def _answer_snapshot(pool: asyncpg.Pool, dataset: str, topic: str, answer_id: str,
                           owner: str) -> Snapshot | None:
    """An answer topic's newest version, as its asker may read it back. Its expected latency and
    liveness follow the live topics it reads (none: settled)."""
    async with pool.acquire() as conn:
        t = await answer_store.topic(conn, answer_id, owner)
    if t is None or t.dataset not in (None, dataset):
        return None
    data = msgspec.json.decode(t.latest)
    live = data.get("live_topics") or []
    read = await read_freshness(pool, dataset, live) if t.basis is not None else {}
    stale = min((f.stale_after_ms for f in read.values() if f.stale_after_ms is not None), default=None)
    as_of = max([f.as_of for f in read.values()], default=datetime.fromisoformat(data["as_of"]))
    now = utc_now()
    expected_latency, liveness = freshness(stale, data["source"], as_of, now)
    envelope = SnapshotEnvelope(
        op="snapshot", type=ANSWER_DELTA, topic=topic, seq=t.version, source_ts=datetime.fromisoformat(data["as_of"]),
        emit_ts=now, source=data["source"], data=data, expected_latency=expected_latency, liveness=liveness,
        rg_line=data["rg_line"],
    )
    return Snapshot(t.version, encode(envelope), Fresh(stale, data["source"], as_of))


async def _read_snapshot(pool: asyncpg.Pool | None, dataset: str, topic: str, owner: str) -> Snapshot | None:
    if pool is None:
        raise _unavailable("The read models are")
    kind, _, ident = topic.partition(":")
    if kind not in SERVED_KINDS:
        return None
    if kind == "answer":
        return await _answer_snapshot(pool, dataset, topic, ident, owner)
    schema = f'"{pg_schema(dataset)}"'
    now = utc_now()
    async with pool.acquire() as conn, conn.transaction(isolation="repeatable_read", readonly=True):
        if kind == "game":
            row = await wire_sql.game_row(conn, schema, ident)
            if row is None:
                return None
            data, stale, delta_type = game_snapshot(row), game_stale_after_ms(row["status"]), "game.state"
            rg_line = None
        else:
            row, lines = await wire_sql.market_rows(conn, schema, ident)
            if row is None:
                return None
            data, stale = market_snapshot(row, lines), market_stale_after_ms(row["game_status"])
            delta_type = "market.suspended" if row["status"] == "suspended" else "market.update"
            rg_line = RG_LINE  # every wagering topic's snapshot carries the cost line
    expected_latency, liveness = freshness(stale, row["source"], row["as_of"], now)
    envelope = SnapshotEnvelope(
        op="snapshot", type=delta_type, topic=topic, seq=row["last_seq"], source_ts=row["as_of"], emit_ts=now,
        source=row["source"], data=data, expected_latency=expected_latency, liveness=liveness, rg_line=rg_line,
    )
    return Snapshot(row["last_seq"], encode(envelope), Fresh(stale, row["source"], row["as_of"]))


async def read_freshness(pool: asyncpg.Pool | None, dataset: str, topics: list[str]) -> dict[str, Fresh]:
    """Freshness of several topics from the read models, one query per topic kind; topics that
    no longer exist are left out. Raises what asyncpg raises: the caller keeps what it knew."""
    if pool is None or not topics:
        return {}
    schema = f'"{pg_schema(dataset)}"'
    by_kind: dict[str, list[str]] = {}
    for topic in topics:
        kind, _, ident = topic.partition(":")
        by_kind.setdefault(kind, []).append(ident)
    out = {}
    async with pool.acquire() as conn:
        if by_kind.get("game"):
            for row in await wire_sql.game_freshness(conn, schema, by_kind["game"]):
                out[f"game:{row['id']}"] = Fresh(game_stale_after_ms(row["status"]), row["source"], row["as_of"])
        if by_kind.get("market"):
            for row in await wire_sql.market_freshness(conn, schema, by_kind["market"]):
                out[f"market:{row['id']}"] = Fresh(market_stale_after_ms(row["game_status"]), row["source"],
                                                   row["as_of"])
    return out


async def missed_deltas(fanout: DeltaFanout, pool: asyncpg.Pool | None, dataset: str,
                        last_seqs: dict[str, int]) -> dict[str, list[Delta] | None]:
    """Per topic, what a resuming client missed after its last seq (`DeltaFanout.missed`: from
    memory or the retained log), or None when a snapshot is needed. A topic neither can vouch for
    (no delta within the resume window: a quiet topic) is still resumed with nothing to replay
    when the client holds its latest seq, as the read models have it. Subscribe first."""
    out = await fanout.missed(dataset, last_seqs)
    unknown: dict[str, list[str]] = {}
    for topic, found in out.items():
        kind, _, ident = topic.partition(":")
        if found is None and kind in TABLES:
            unknown.setdefault(kind, []).append(ident)
    if unknown and pool is not None:
        schema = f'"{pg_schema(dataset)}"'
        try:
            async with pool.acquire() as conn:
                for kind, ids in unknown.items():
                    for ident, seq in (await wire_sql.last_seqs(conn, schema, TABLES[kind], ids)).items():
                        if last_seqs[f"{kind}:{ident}"] == seq:
                            out[f"{kind}:{ident}"] = []  # current: nothing missed
        except DATABASE_DOWN as exc:  # snapshots instead, which is always correct
            log.warning("wire resume could not read current seqs", error=repr(exc))
    return out


def delta_latency(topic: str, delta: Delta) -> int | None | EllipsisType:
    """The latency hint a delta sets: a game's status says it; other deltas leave it (`...`)."""
    if delta.status is not None and topic.startswith("game:"):
        return game_stale_after_ms(delta.status)
    return ...


async def feed_rechecks(pool: asyncpg.Pool | None, dataset: str, book: FeedBook) -> list[Feed]:
    """The `feed` messages of a connection's topics that are due a recheck now."""
    due = book.due(utc_now())
    if not due:
        return []
    try:
        read = await read_freshness(pool, dataset, due)
    except DATABASE_DOWN as exc:  # time alone decides until the next recheck
        log.warning("wire freshness recheck failed", error=repr(exc))
        read = {}
    return book.recheck(read, due, utc_now())
