"""Every live sample file through the real pipeline: ingested into the broker, projected into
PostgreSQL by the projector, as `svc sample load` and `svc projector run` would."""

from __future__ import annotations

from datetime import datetime, timezone

from infra.topics import ensure_topics
from ingest.event_log import open_event_log
from ingest.pipeline import ingest
from ingest.samples import live_files
from tests.support.projection_harness import projector, run_to_end


async def load_samples(settings) -> int:
    """Ingest and project every live sample file; the records the projector applied."""
    await ensure_topics(settings)
    async with open_event_log(settings, "live") as log:
        for parse, path in live_files():
            await ingest(parse(path, datetime.now(timezone.utc)), log)
    async with projector(settings, "live", relay=False) as p:
        return await run_to_end(p)
