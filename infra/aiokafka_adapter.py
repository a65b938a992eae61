"""Everything of ours that reaches past aiokafka's public API, in one place, written against one
aiokafka version (`AIOKAFKA_VERSION`, pinned in pyproject.toml). (projections/faust_adapter.py
does the same for faust, including the one aiokafka consumer option faust does not expose.)

One need has no public API: the partitions of a topic on a consumer that has not seen it yet.
`AIOKafkaConsumer.partitions_for_topic` answers from the metadata its client took when it
started, refreshed in the background only every `metadata_max_age_ms` (5 min): a topic created
since (a fresh stack's topics, a test's) is unknown to it. The public `AIOKafkaConsumer.topics()`
fetches every topic into a copy it throws away, so the consumer's own view stays as it was (the
export and the reconciliation called it as if it refreshed that view). `partitions` asks the
client for a refresh now (`consumer._client.force_metadata_update()`, which with no tracked
topics fetches every topic) and then reads the partitions the public way; `partitions_of` lists
them for every reader of the log (log ends, replays, resume scans, export, reconciliation).

tests/unit/test_aiokafka_adapter.py fails on any other aiokafka version and checks the method
still exists as used; tests/integration/test_aiokafka_adapter.py checks against the real broker
that a started consumer does not know a topic created since, that `topics()` does not teach it,
and that a refresh does. On an upgrade, re-check the above against the new sources, then move
`AIOKAFKA_VERSION` and the pin together.
"""

from __future__ import annotations

from aiokafka import AIOKafkaConsumer, TopicPartition

AIOKAFKA_VERSION = "0.14.0"


async def refresh_metadata(consumer: AIOKafkaConsumer) -> None:
    """Have a started consumer's client fetch the cluster's metadata (every topic) now."""
    await consumer._client.force_metadata_update()


async def partitions(consumer: AIOKafkaConsumer, topic: str) -> set[int]:
    """The partitions of `topic` (empty if the broker does not have it), on a started consumer."""
    found = consumer.partitions_for_topic(topic)
    if found is None:  # a fresh client knows no topics yet
        await refresh_metadata(consumer)
        found = consumer.partitions_for_topic(topic)
    return set(found or ())


async def partitions_of(consumer: AIOKafkaConsumer, topics: list[str]) -> list[TopicPartition]:
    """Every partition of `topics`, in topic order, then partition order."""
    return [TopicPartition(topic, p) for topic in topics for p in sorted(await partitions(consumer, topic))]
