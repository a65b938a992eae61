"""A producer that outlives its broker (issue 19, item 5), with a real broker restart.

The embedded broker keeps its log in memory: a restarted one is a new, empty log with a new
epoch once someone writes it (the supervisor recreates the topics; the projector or the next
command writes the epoch). An ingest under way must not keep writing into that new log as if
it were the old one: it stops and says so, and running it again completes it.
"""

from __future__ import annotations

import asyncio
import subprocess
import threading
from collections import Counter
from datetime import datetime, timezone

import msgspec
import pytest

from infra.broker import start_broker
from infra.log_epoch import EpochChanged, ensure_epoch
from infra.topics import ensure_topics
from ingest.event_log import open_event_log
from ingest.export import read_log
from ingest.pipeline import ingest
from ingest.samples import live_files
from schemas.events import decode


@pytest.fixture
def own_broker(tmp_path):
    """A broker of this test's own, so that restarting it disturbs no other test."""
    state = {"log": tmp_path / "tansu.log"}
    state["proc"], state["port"] = start_broker(log_path=state["log"])
    yield state
    state["proc"].terminate()
    try:
        state["proc"].wait(10)
    except subprocess.TimeoutExpired:
        state["proc"].kill()


def restart(state, settings) -> None:
    """What `svc up` does when its broker dies: a new broker on the same address, topics created
    again, and (the restarted projector) a new epoch written. Run in a thread of its own: the
    caller's event loop is the ingest's, paused in a progress callback."""
    state["proc"].kill()
    state["proc"].wait(10)
    state["proc"], _ = start_broker(port=state["port"], log_path=state["log"])

    async def prepare():
        await ensure_topics(settings)
        await ensure_epoch(settings, "live")

    failure: list[BaseException] = []
    thread = threading.Thread(target=lambda: _run(prepare(), failure))
    thread.start()
    thread.join(60)
    assert not thread.is_alive() and not failure, failure


def _run(coro, failure: list) -> None:
    try:
        asyncio.run(coro)
    except BaseException as exc:  # reported to the test thread
        failure.append(exc)


async def test_an_ingest_stops_when_its_broker_is_replaced_and_a_second_run_completes(settings, own_broker):
    settings = msgspec.structs.replace(settings, kafka_bootstrap=f"127.0.0.1:{own_broker['port']}")
    await ensure_topics(settings)
    parse, path = live_files()[0]  # the games file: 842 records, 4 batches, 4033 events
    batches = 0

    def progress(summary) -> None:
        nonlocal batches
        batches += 1
        if batches == 1:  # the first batch is on the old log: now the broker is replaced
            restart(own_broker, settings)

    async with open_event_log(settings, "live") as log:
        old_epoch = log.epoch
        with pytest.raises(EpochChanged) as stopped:
            await asyncio.wait_for(ingest(parse(path, datetime.now(timezone.utc)), log, progress), 120)
    assert old_epoch in str(stopped.value) and "run it again" in str(stopped.value)
    assert batches == 1
    # nothing of this run went into the new log: it stopped before its next batch
    assert [r async for r in read_log(settings, "live")] == []

    async with open_event_log(settings, "live") as log:
        assert log.epoch != old_epoch
        again = await asyncio.wait_for(ingest(parse(path, datetime.now(timezone.utc)), log), 120)
    assert (again.events, again.accepted, again.duplicate) == (4033, 4033, 0)
    ids = Counter([decode(r.value).event_id async for r in read_log(settings, "live")])
    assert len(ids) == 4033 and set(ids.values()) == {1}  # every event once, none twice
