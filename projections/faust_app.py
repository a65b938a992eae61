"""The faust app of the live path: one agent per dataset over its three feed topics.

Agents take batches (`faust_adapter.take_events`: faust's `take_events`, its timer started by a
batch's first record) and hand the records over to the dataset's writer
(projections/live_batches.py: what arrives while a batch is written goes into the next one, so
a projector behind the log writes bigger batches, up to LIVE_BATCH_MAX records), which applies
them through the dataset's projector; the projector skips what Postgres already holds. Kafka's
committed offsets are only a hint here: the truth is the tracking rows. So when the group has assigned partitions, before faust seeks to
the committed offsets, we commit the tracked offsets + 1 (after the start-up catch-up, done by
the fast aiokafka path, has stopped), and faust resumes exactly there.

Settings for the embedded tansu broker (docs/architecture.md, "Known limits of the embedded broker"): short session/heartbeat/rebalance timeouts
(a restarted worker is assigned in seconds, not half a minute), no leader topic, no tables, no
web server, no topic declaration (`infra.topics` creates every topic), no idempotent producer.
Only the public API of faust is used here; what reaches past it (the short fetch wait, the
commit that sets where faust resumes) is in projections/faust_adapter.py.
"""

from __future__ import annotations

import logging
from typing import Awaitable, Callable, Mapping

import faust

from infra.kafka import wait_for_new_ms
from infra.settings import Settings
from projections.faust_adapter import FETCH_MAX_WAIT_MS, broker_url, commit_offsets, start_fetch_wait, take_events
from projections.live_batches import LiveBatches
from projections.projector import DatasetProjector

log = logging.getLogger("projections.faust")
TAKE_MAX = 2_000
TAKE_WITHIN = 0.005  # seconds a partial batch waits after its first record: the live latency floor


def build_app(
    settings: Settings,
    group: str,
    projectors: dict[str, DatasetProjector],
    writers: Mapping[str, LiveBatches],
    before_resume: Callable[[], Awaitable[None]],
) -> faust.App:
    """`writers`: per dataset, what applies the records its agent takes (their `run` is the
    caller's to start and stop)."""
    app = faust.App(
        group,
        broker=broker_url(settings.require_bootstrap()),
        web_enabled=False,
        topic_disable_leader=True,
        topic_allow_declare=False,
        store="memory://",
        # faust keeps a folder of its own (default: `<app id>-data` in the working directory,
        # which left one per test run in the repository root): under the stack's data dir
        datadir=str(settings.data_dir / "projector"),
        broker_session_timeout=6,
        broker_heartbeat_interval=1,
        broker_rebalance_timeout=6,
        broker_commit_interval=1.0,
        consumer_auto_offset_reset="earliest",
        stream_buffer_maxsize=TAKE_MAX * 2,
        autodiscover=False,
    )
    start_fetch_wait(app, settings.live_fetch_wait_ms or wait_for_new_ms(settings, FETCH_MAX_WAIT_MS))
    by_topic = {topic: p for p in projectors.values() for topic in p.topics}

    @app.on_rebalance_complete.connect
    async def resume_at_tracked_offsets(sender, **kwargs) -> None:
        await before_resume()
        # what the agents took before the rebalance is applied first, so the tracked offsets
        # below are where the log is really applied to (records taken twice are skipped anyway)
        for writer in writers.values():
            await writer.drain()
        for p in projectors.values():
            if p.relay is not None:  # deltas a projector that left committed and did not send
                p.relay.rescan()
        offsets = {}
        for tp in app.consumer.assignment():
            p = by_topic.get(tp.topic)
            if p is not None:
                offsets[tp] = p.committed.get((tp.topic, tp.partition), -1) + 1
        if offsets:
            # faust seeks to the committed offsets right after this signal
            await commit_offsets(app, offsets)
        log.info("faust assigned %d partitions; resuming at the tracked offsets", len(offsets))

    for dataset, projector in projectors.items():
        topic = app.topic(*projector.topics, key_serializer="raw", value_serializer="raw")

        async def project(stream, writer: LiveBatches = writers[dataset]) -> None:
            # handed over, not applied: faust acks them now, which only moves Kafka's committed
            # offsets, a hint (resume_at_tracked_offsets); the writer applies them meanwhile
            async for events in take_events(stream, TAKE_MAX, TAKE_WITHIN):
                await writer.add([e.message for e in events])

        app.agent(topic, name=f"project_{dataset}")(project)
    return app


__all__ = ["build_app"]
