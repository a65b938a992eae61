"""Behind the log keeper (what `svc up` runs) the live path waits long for new records and still
sees each one at once: the keeper answers a waiting fetch when an acknowledged produce lands
(docs/log.md), so `svc up` sets SVC_BROKER_LONG_POLL for its children and the live path asks
for 500 ms waits instead of polling every 10 ms (an idle projector cost 11% of a core and its
keeper 6% polling; 7% and 0.4% waiting, measured). Here the wait is 10 s, far longer than what
the test allows a record, so a broker that answered only when the wait ran out fails it.
Real keeper, tansu and Postgres; the projector as its own process."""

from __future__ import annotations

import asyncio
import signal
import time

import msgspec
import pytest

from infra.topics import ensure_topics
from tests.support import projection_events as ev
from tests.support.processes import start_keeper
from tests.support.projection_harness import caught_up, start_projector

WAIT_MS = 10_000
RECORDS = 8


@pytest.fixture
def kept(tmp_path):
    """A log keeper of its own (tansu behind it), as `svc up` runs it."""
    proc, port = start_keeper(tmp_path / "kept", tmp_path / "keeper.log")
    yield f"127.0.0.1:{port}"
    proc.terminate()
    proc.wait(10)


async def test_behind_the_keeper_a_long_fetch_wait_does_not_delay_a_record(settings, kept, tmp_path):
    settings = msgspec.structs.replace(settings, kafka_bootstrap=kept)
    await ensure_topics(settings)
    games = ev.schedule(2)
    await ev.publish(settings, games)
    log = tmp_path / "projector.log"
    proc = start_projector(settings, log, SVC_BROKER_LONG_POLL="true", SVC_LIVE_FETCH_WAIT_MS=str(WAIT_MS))
    try:
        assert await caught_up(settings, 60), log.read_text()[-3000:]
        delays = []
        for minute in range(1, RECORDS + 1):  # one record at a time, each into an idle live path
            await asyncio.sleep(0.3)
            started = time.monotonic()
            await ev.publish(settings, [ev.state(games[0].game_id, "live", minute=minute, home=minute)])
            assert await caught_up(settings, 2 * WAIT_MS / 1000), log.read_text()[-3000:]
            delays.append(time.monotonic() - started)
        # waiting out each fetch would see a record 5 s late on average (0-10 s); seen on arrival,
        # it is applied in tens of ms (the lag check polls every 0.2 s)
        assert sorted(delays)[-2] < 2.0, delays  # one slow apply on a loaded machine is not a wait
    finally:
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(proc.wait, 40)
    assert code == 0, log.read_text()[-3000:]
