"""The faust app of the live path: one agent per dataset over its three feed topics.

Agents take batches (`stream.take_events`) and hand the records to the dataset's projector,
which skips what Postgres already holds. Kafka's committed offsets are only a hint here: the
truth is the tracking rows. So when the group has assigned partitions, before faust seeks to
the committed offsets, we commit the tracked offsets + 1 (after the start-up catch-up, done by
the fast aiokafka path, has stopped), and faust resumes exactly there.

Settings for the embedded tansu broker (docs/architecture.md, "Known limits of the embedded broker"): short session/heartbeat/rebalance timeouts
(a restarted worker is assigned in seconds, not half a minute), no leader topic, no tables, no
web server, no topic declaration (`infra.topics` creates every topic), no idempotent producer.
"""

from __future__ import annotations

import logging
from typing import Awaitable, Callable

import faust
from faust.transport.drivers import TRANSPORTS
from faust.transport.drivers import aiokafka as faust_aiokafka

from infra.settings import Settings
from projections.projector import DatasetProjector

log = logging.getLogger("projections.faust")
TAKE_MAX = 2_000
TAKE_WITHIN = 0.005  # seconds a partial batch waits: the live latency floor
# faust fixes its consumer's fetch long-poll at 1500 ms. tansu does not answer a waiting fetch
# when records arrive (measured: p50 latency 450 ms at 1500, 27 ms at 100, 2 ms at 5), so the
# wait is the latency floor there; Kafka answers at once either way. Shorter waits cost idle
# CPU (empty fetches): at 5 ms an idle projector used ~20% of a core here.
FETCH_MAX_WAIT_MS = 10


class _ConsumerThread(faust_aiokafka.AIOKafkaConsumerThread):
    def _create_worker_consumer(self, transport):
        consumer = super()._create_worker_consumer(transport)
        consumer._fetch_max_wait_ms = FETCH_MAX_WAIT_MS  # read when the consumer starts
        return consumer


class _Consumer(faust_aiokafka.Consumer):
    def _new_consumer_thread(self) -> _ConsumerThread:
        return _ConsumerThread(self, loop=self.loop, beacon=self.beacon)


class Transport(faust_aiokafka.Transport):
    """faust's aiokafka transport with a short fetch wait (URL scheme `svckafka://`)."""

    Consumer = _Consumer


TRANSPORTS.aliases.setdefault("svckafka", "projections.faust_app:Transport")


def broker_url(bootstrap: str) -> str:
    return ";".join(f"svckafka://{host.strip()}" for host in bootstrap.split(",") if host.strip())


def build_app(
    settings: Settings,
    group: str,
    projectors: dict[str, DatasetProjector],
    apply: Callable[[DatasetProjector, list], Awaitable[None]],
    before_resume: Callable[[], Awaitable[None]],
) -> faust.App:
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
    by_topic = {topic: p for p in projectors.values() for topic in p.topics}

    @app.on_rebalance_complete.connect
    async def resume_at_tracked_offsets(sender, **kwargs) -> None:
        await before_resume()
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
            await app.consumer._thread.commit(offsets)
        log.info("faust assigned %d partitions; resuming at the tracked offsets", len(offsets))

    for dataset, projector in projectors.items():
        topic = app.topic(*projector.topics, key_serializer="raw", value_serializer="raw")

        async def project(stream, projector: DatasetProjector = projector) -> None:
            async for events in stream.take_events(TAKE_MAX, within=TAKE_WITHIN):
                await apply(projector, [e.message for e in events])

        app.agent(topic, name=f"project_{dataset}")(project)
    return app


__all__ = ["build_app", "Transport"]
