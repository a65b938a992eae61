"""The real sample files through the adapters and the reducers, in memory (no broker, no
Postgres): what the projector would hold for each key after ingesting them in `svc sample
load` order. Pure tests of figures against the source files start here."""

from __future__ import annotations

from datetime import datetime, timezone
from functools import lru_cache

from infra.settings import Settings
from ingest.batches import collect
from ingest.resolution import MemoryResolver
from ingest.samples import live_files
from projections.reducers import reduce
from schemas.events import event_key

INGESTED = datetime(2026, 1, 1, tzinfo=timezone.utc)
WINDOW_US = Settings().consensus_window_seconds * 1_000_000


@lru_cache(maxsize=1)
def sample_events() -> tuple:
    resolver = MemoryResolver()
    events = []
    for parse, path in live_files():
        events.extend(collect(parse(path, INGESTED).items, resolver).events)
    return tuple(events)


@lru_cache(maxsize=1)
def sample_states() -> dict:
    """Each log key's state after every sample event, folded in file order."""
    states: dict = {}
    for e in sample_events():
        key = event_key(e)
        states[key], _ = reduce(states.get(key), e, WINDOW_US)
    return states
