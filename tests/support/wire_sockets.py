"""Many idle Wire sockets against a real API process: what each one costs the server, and
whether the server gives it back when they close. Shared by the leak test
(tests/integration/test_wire_memory.py) and `make bench` (tests/perf/bench_wire_memory.py).

The socket limits are real: at most 5 open per address and 30 attempts a minute per address, 100
per `scale` account. So the sockets come from many loopback source addresses (127.0.0.0/8 all
reaches the same server on Linux), 5 from each, over accounts of 100; their tickets are minted
straight into Postgres (minting 1,000 over HTTP would test the rate limits, not the sockets).
"""

from __future__ import annotations

import asyncio
import gc
import json
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import asyncpg
import psutil
from websockets.asyncio.client import connect as ws_connect

from access.store import create_key
from tests.support.live_server import api_process
from wire.limits import PER_ADDRESS
from wire.tickets import mint_ticket

PER_ACCOUNT = 100  # the `scale` plan's open connections
BATCH = 50  # sockets opened at once


@dataclass
class Figures:
    sockets: int
    base_rss: int  # the API process once one socket has come and gone (fan-out started, code warm)
    open_rss: int  # with every socket open and idle
    closed_rss: int  # after they all closed and were counted out
    open_seconds: float
    rows_open: int  # access.wire_connections rows while open
    rows_closed: int  # ... and after
    errors: list[str] = field(default_factory=list)

    @property
    def per_socket(self) -> float:
        return (self.open_rss - self.base_rss) / self.sockets

    @property
    def kept_per_socket(self) -> float:
        return (self.closed_rss - self.base_rss) / self.sockets


def _rss(proc: psutil.Process) -> int:
    """The serving process's resident size: with its children (granian, and h2corn with several workers, serve from workers)."""
    return sum(p.memory_info().rss for p in [proc, *proc.children(recursive=True)])


async def _tickets(settings, n: int) -> list[str]:
    conn = await asyncpg.connect(settings.database_url)
    try:
        out = []
        secret = settings.secret().encode()
        for a in range((n + PER_ACCOUNT - 1) // PER_ACCOUNT):
            _, key = await create_key(conn, secret, account=f"sockets{a}", plan="scale", scopes={"wire:connect"},
                                     mode="live")
            for _ in range(min(PER_ACCOUNT, n - a * PER_ACCOUNT)):
                ticket, _ = await mint_ticket(conn, secret, key_id=key.key_id, account_id=key.account_id, plan="scale",
                                              mode="live", transport="ws", topics=None)
                out.append(ticket)
        return out
    finally:
        await conn.close()


async def _rows(settings) -> int:
    conn = await asyncpg.connect(settings.database_url)
    try:
        return await conn.fetchval("SELECT count(*) FROM access.wire_connections")
    finally:
        await conn.close()


async def _open(url: str, ticket: str, source: str, errors: list[str]):
    try:
        ws = await ws_connect(url, subprotocols=["svc.v1", f"svc.ticket.{ticket}"], local_addr=(source, 0),
                              ping_interval=None, max_queue=4)
        hello = json.loads(await asyncio.wait_for(ws.recv(), 30))
        if hello.get("op") != "hello":
            errors.append(f"{source}: {hello}")
        return ws
    except Exception as exc:  # counted: the test asserts there were none
        errors.append(f"{source}: {exc!r}")
        return None


@asynccontextmanager
async def serving(settings, tmp_path, server: str | None = None):
    """The API process (idle sockets are never pinged within a run: a 60 s interval), under
    `server` (infra/api_server.py; None: SVC_API_SERVER or the default)."""
    env = {"KAFKA_BOOTSTRAP": settings.kafka_bootstrap, "SVC_TOPIC_NAMESPACE": settings.topic_namespace,
           "SVC_WIRE_PING_SECONDS": "60", **({"SVC_API_SERVER": server} if server else {})}
    with api_process(settings.database_url, settings.data_dir, settings.key_secret, tmp_path / f"api-{server}.log",
                     **env) as (base, proc):
        yield base.replace("http://", "ws://") + "/v1/wire", psutil.Process(proc.pid)


async def _settle(proc: psutil.Process, seconds: float = 1.0) -> int:
    await asyncio.sleep(seconds)
    return _rss(proc)


async def _counted_out(settings, timeout: float = 30) -> int:
    deadline = time.monotonic() + timeout
    while (rows := await _rows(settings)) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    return rows


async def measure(settings, url: str, proc: psutil.Process, n: int) -> Figures:
    """Open `n` idle sockets (each authenticated, its hello read), measure, close them all."""
    tickets = await _tickets(settings, n + 1)
    errors: list[str] = []
    warm = await _open(url, tickets.pop(), "127.0.0.1", errors)  # starts the fan-out, warms the code paths
    if warm is not None:
        await warm.close()
    await _counted_out(settings)
    gc.collect()
    base = await _settle(proc)
    # 5 sockets per loopback address: 127.1.1.1, 127.1.2.1, ...
    sources = [f"127.{1 + i // PER_ADDRESS // 250}.{1 + i // PER_ADDRESS % 250}.1" for i in range(n)]
    started = time.monotonic()
    sockets = []
    for i in range(0, n, BATCH):
        sockets += await asyncio.gather(*(_open(url, t, s, errors) for t, s in
                                          zip(tickets[i:i + BATCH], sources[i:i + BATCH])))
    open_seconds = time.monotonic() - started
    open_rss = await _settle(proc)
    rows_open = await _rows(settings)
    await asyncio.gather(*(ws.close() for ws in sockets if ws is not None))
    rows_closed = await _counted_out(settings)
    closed_rss = await _settle(proc, 2.0)
    return Figures(n, base, open_rss, closed_rss, open_seconds, rows_open, rows_closed, errors)
