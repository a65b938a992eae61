"""Topic admin: every topic is created explicitly with its partition count.

(A broker that auto-creates topics on first use would pick its own count: tansu picks 4.)
"""

from __future__ import annotations

from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from infra.kafka import started
from infra.settings import Settings
from schemas.datasets import CONTROL, DATASETS, DEADLETTER, FEED_TOPICS, WIRE_DELTAS, Dataset, topic_name


def topic_plan(settings: Settings, datasets: tuple[Dataset, ...] = DATASETS) -> dict[str, int]:
    """Every topic name of the deployment and its partition count."""
    plan: dict[str, int] = {}
    for ds in datasets:
        for base in FEED_TOPICS:
            plan[topic_name(ds, base, settings.topic_namespace)] = settings.topic_partitions
        plan[topic_name(ds, WIRE_DELTAS, settings.topic_namespace)] = settings.delta_partitions
        plan[topic_name(ds, DEADLETTER, settings.topic_namespace)] = 1
        plan[topic_name(ds, CONTROL, settings.topic_namespace)] = 1
    return plan


async def ensure_topics(settings: Settings, datasets: tuple[Dataset, ...] = DATASETS) -> dict[str, int]:
    """Create the topics that do not exist yet; returns the plan."""
    plan = topic_plan(settings, datasets)
    async with started(AIOKafkaAdminClient(bootstrap_servers=settings.require_bootstrap())) as admin:
        existing = set(await admin.list_topics())
        missing = [NewTopic(name, n, 1) for name, n in plan.items() if name not in existing]
        if missing:
            await admin.create_topics(missing)
    return plan
