"""The fetch wait the faust adapter sets on faust's worker consumer is the one the started
consumer fetches with, on the real broker (projections/faust_adapter.py, point 1)."""

from __future__ import annotations

import faust

from projections.faust_adapter import FETCH_MAX_WAIT_MS, broker_url


async def test_a_started_worker_consumer_fetches_with_the_short_wait(broker, tmp_path):
    app = faust.App("svc-adapter-check", broker=broker_url(broker), web_enabled=False, store="memory://",
                    autodiscover=False, datadir=str(tmp_path / "faust"))
    consumer = app.consumer._thread._create_worker_consumer(app.transport)
    await consumer.start()
    try:
        assert consumer._fetcher._fetch_max_wait_ms == FETCH_MAX_WAIT_MS
    finally:
        await consumer.stop()
