"""A broker that cannot be reached: every command and every reader of the log fails at once with
the reason, and closes the Kafka client it made. A client whose start raised and was never
stopped keeps its connections and tasks (aiokafka logs "Unclosed AIOKafkaConsumer" when it is
collected); a process holding such clients may go on running instead of exiting for its
supervisor to restart it. (`infra.kafka.started` is the one shape for a block: start inside, stop
always; `infra.kafka.start_or_stop` for a client kept across calls: stopped when its start fails.)"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest
from aiokafka.errors import KafkaConnectionError

from infra.net import free_port
from infra.settings import load_settings

ROOT = Path(__file__).resolve().parents[2]
UNCLOSED = "Unclosed AIOKafka"


@pytest.fixture
def down(tmp_path):
    """Settings naming a broker nobody listens for (a free port)."""
    return load_settings(env={}, use_stack=False, data_dir=tmp_path / "svc", kafka_bootstrap=f"127.0.0.1:{free_port()}",
                         topic_namespace="down.")


async def _no_client_unclosed(caplog) -> None:
    gc.collect()
    await asyncio.sleep(0)
    unclosed = [r.getMessage() for r in caplog.records if UNCLOSED in r.getMessage()]
    assert not unclosed, unclosed


async def _fails_and_closes(make, caplog) -> None:
    """`make()`'s coroutine raises the broker's unavailability within 60 s, and every client it
    made is closed (none reported unclosed once collected)."""
    caplog.set_level(logging.ERROR, logger="asyncio")
    raised = None
    try:
        await asyncio.wait_for(make(), 60)
    except KafkaConnectionError as exc:  # (the traceback's frames hold the client: dropped below)
        raised = str(exc)
    assert raised and "Unable to bootstrap" in raised
    await _no_client_unclosed(caplog)


async def test_projector_catch_up(down, caplog):
    from projections.projector import DatasetProjector
    from projections.replay import catch_up

    projector = DatasetProjector(down, "live", use_cache=False)
    await _fails_and_closes(lambda: catch_up(projector, None), caplog)  # (the broker is asked before Postgres)


async def test_reconcile_reads(down, caplog):
    from ingest.reconcile import log_ends, read_ids

    await _fails_and_closes(lambda: read_ids(down, "live", {}), caplog)
    await _fails_and_closes(lambda: log_ends(down, "live", {}), caplog)


async def test_dead_letters_and_export(down, caplog, tmp_path):
    from ingest.deadletters import read_dead_letters
    from ingest.export import export

    await _fails_and_closes(lambda: read_dead_letters(down, "live"), caplog)
    await _fails_and_closes(lambda: export(down, "live", tmp_path / "out.jsonl"), caplog)


async def test_wire_resume_scan(down, caplog):
    from wire.log_replay import LogReplay

    replay = LogReplay(down, lambda value: None)
    try:
        await _fails_and_closes(lambda: replay.since("down.live.wire.deltas", {"game:gm_1": 0}), caplog)
    finally:
        await replay.aclose()


async def test_the_log_helpers(down, caplog):
    from infra.log_epoch import ensure_epoch
    from infra.topics import ensure_topics
    from projections.log_ends import log_end_offsets, record_times

    await _fails_and_closes(lambda: ensure_epoch(down, "live"), caplog)
    await _fails_and_closes(lambda: ensure_topics(down), caplog)
    await _fails_and_closes(lambda: log_end_offsets(down, ["down.live.feed.games"]), caplog)
    await _fails_and_closes(lambda: record_times(down, {("down.live.feed.games", 0): 0}), caplog)


async def test_a_kept_client_whose_start_is_cancelled_is_stopped(caplog):
    """A broker that takes connections and never answers: the caller's timeout cancels the
    start, and the client is stopped all the same."""
    from infra.kafka import make_consumer, start_or_stop

    caplog.set_level(logging.ERROR, logger="asyncio")
    accepted = []
    silent = await asyncio.start_server(lambda reader, writer: accepted.append(writer), "127.0.0.1", 0)
    try:
        port = silent.sockets[0].getsockname()[1]
        settings = load_settings(env={}, use_stack=False, kafka_bootstrap=f"127.0.0.1:{port}")
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(start_or_stop(make_consumer(settings)), 1)
        assert accepted  # it was the start under way that was cancelled
    finally:
        for writer in accepted:
            writer.close()
        silent.close()
    await _no_client_unclosed(caplog)


async def test_live_answer_publish_during_an_outage(down, caplog):
    """Each publish of a live answer while the broker is away fails (its task retries a second
    later) and leaves no producer behind; the next one makes a producer again."""
    from api.answers.live import LiveAnswers
    from schemas.answers import Answer
    from wire.fanout import DeltaFanout

    now = datetime.now(timezone.utc)
    answer = Answer(answer_id="an_1", status="completed", category=4, playbook=None, tier="free", supersedes="an_0",
                    summary="", sentences=[], citations=[], figures=[], live_topics=[], rg_line="",
                    assumptions=[], links={}, as_of=now, source="test", attribution=None, created_at=now,
                    completed_at=now)
    live = LiveAnswers(None, DeltaFanout(down), down)
    try:
        for seq in (2, 3):
            await _fails_and_closes(lambda: live._publish("live", "an_0", seq, answer), caplog)
            assert live._producer is None
    finally:
        await live.aclose()


async def test_wire_fan_out_start(down, caplog):
    """A process's first Wire connection starts the fan-out's consumer: the connection gets a
    problem object and no consumer is left open (the fan-out's own start and its cancellation:
    test_wire_fanout_start.py)."""
    from api.problems import ProblemError
    from api.wire_serving import fanout_of

    caplog.set_level(logging.ERROR, logger="asyncio")
    code = None
    try:
        await fanout_of(SimpleNamespace(extras={}, settings=down, pool=None))
    except ProblemError as exc:  # (its context holds the consumer's frames: dropped here)
        code = exc.code
    assert code == "service_unavailable"
    await _no_client_unclosed(caplog)


async def test_projector_start_up(down, database_url, caplog, monkeypatch):
    """The projector's producer, the first broker client it keeps (its topics were there when it
    asked, the broker gone by its producer's start): `run` raises, so the process exits for its
    supervisor to restart it, and the producer is closed."""
    import projections.runner as runner

    async def topics_there(settings):
        return {}

    monkeypatch.setattr(runner, "ensure_topics", topics_there)
    settings = load_settings(env={}, use_stack=False, data_dir=down.data_dir, kafka_bootstrap=down.kafka_bootstrap,
                             topic_namespace=down.topic_namespace, database_url=database_url)
    await _fails_and_closes(lambda: runner.Projector(settings).run(), caplog)


@pytest.mark.parametrize("args", [
    ("export", "{tmp}/out.jsonl"),
    ("ingest", "dead-letters"),
    ("ingest", "odds-api", str(ROOT / "ingest/samples/oddsapi/nfl_2021_h2h_decimal.json")),
    ("replay", "{tmp}/in.jsonl"),
    ("projections", "rebuild"),
    ("projections", "verify"),
], ids=lambda a: " ".join(a[:2]))
def test_each_command_exits_non_zero_with_the_reason(args, down, database_url, tmp_path):
    (tmp_path / "in.jsonl").write_text("")
    env = {**os.environ, "KAFKA_BOOTSTRAP": down.kafka_bootstrap, "DATABASE_URL": database_url,
           "SVC_TOPIC_NAMESPACE": down.topic_namespace, "SVC_DATA_DIR": str(down.data_dir)}
    done = subprocess.run([sys.executable, "-m", "cli.main", *(a.format(tmp=tmp_path) for a in args)],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    said = done.stdout + done.stderr
    assert done.returncode != 0, said[-3000:]
    assert "Unable to bootstrap" in said, said[-3000:]
    assert UNCLOSED not in said, said[-3000:]
