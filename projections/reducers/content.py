"""Content entries (library entries, strategies, recipes): the newest published text, a version
that moves when what the entry says changes, and every revision kept in order.

Events of one entry come in log order (one key, one partition). The same event twice (the same
`event_id`: a record sent again after a crash) changes nothing. A retirement keeps the last text
(the history shows what was retired); a later publication brings the entry back. What moves the
version is the kind's own hash: for a strategy, its verdict and evidence.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from projections.reducers.common import origin_of
from projections.state import ContentRevision, ContentState, LibraryState, RecipeState, StrategyState
from schemas.events import (
    RecipeRetired, ReferenceRetired, StrategyRetired,
)
from schemas.library import content_hash
from schemas.strategies import recipe_version_hash, version_hash

_RETIRED = (ReferenceRetired, StrategyRetired, RecipeRetired)


def reduce_content(state: ContentState | None, e: Any, fresh: Callable[[str], ContentState],
                   version_of: Callable[[Any], str]) -> tuple[ContentState, list]:
    entry = state if state is not None else fresh(e.entry_id)
    if any(r.origin.event_id == e.event_id for r in entry.history):
        return entry, []
    origin = origin_of(e)
    revision = len(entry.history) + 1
    if isinstance(e, _RETIRED):
        step = ContentRevision(revision, "retired", entry.version, None, e.reason, origin)
        return msgspec.structs.replace(entry, status="retired", history=(*entry.history, step)), []
    content = version_of(e.entry)
    version = entry.version + 1 if content != entry.content else entry.version
    action = "published" if entry.status != "published" else "revised"
    step = ContentRevision(revision, action, version, e.entry, None, origin)
    return msgspec.structs.replace(
        entry, entry=e.entry, status="published", version=version, content=content,
        origin=entry.origin if entry.origin is not None else origin, as_of=origin.source_ts,
        history=(*entry.history, step),
    ), []


def reduce_library(state, e):
    return reduce_content(state, e, LibraryState, content_hash)


def reduce_strategy(state, e):
    return reduce_content(state, e, StrategyState, version_hash)


def reduce_recipe(state, e):
    return reduce_content(state, e, RecipeState, recipe_version_hash)
