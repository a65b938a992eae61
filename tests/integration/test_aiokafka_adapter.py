"""What infra/aiokafka_adapter.py relies on, on the real broker: a started consumer does not know
a topic created after its start, the public `topics()` does not teach it, and a metadata
refresh does."""

from __future__ import annotations

import secrets

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from infra.aiokafka_adapter import partitions, partitions_of, refresh_metadata


async def _topic(broker: str, partitions: int) -> str:
    name = f"adapter-{secrets.token_hex(4)}"
    admin = AIOKafkaAdminClient(bootstrap_servers=broker)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)])
    finally:
        await admin.close()
    return name


async def test_a_consumer_learns_a_new_topics_partitions_only_from_a_refresh(broker):
    consumer = AIOKafkaConsumer(bootstrap_servers=broker, enable_auto_commit=False)
    await consumer.start()
    try:
        topic = await _topic(broker, 3)  # created after the consumer took its metadata
        assert consumer.partitions_for_topic(topic) is None  # why the adapter exists
        assert topic in await consumer.topics()  # the public call sees it ...
        assert consumer.partitions_for_topic(topic) is None  # ... but does not tell the consumer
        await refresh_metadata(consumer)
        assert consumer.partitions_for_topic(topic) == {0, 1, 2}
    finally:
        await consumer.stop()


async def test_partitions_of_a_new_topic_and_of_a_topic_the_broker_lacks(broker):
    consumer = AIOKafkaConsumer(bootstrap_servers=broker, enable_auto_commit=False)
    await consumer.start()
    try:
        topic = await _topic(broker, 2)
        assert await partitions_of(consumer, [topic]) == [TopicPartition(topic, 0), TopicPartition(topic, 1)]
        assert await partitions(consumer, f"absent-{secrets.token_hex(4)}") == set()
    finally:
        await consumer.stop()
