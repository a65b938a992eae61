"""Reference library entries: the newest published text, a version that moves when what the
entry says changes, and every revision kept in order.

Events of one entry come in log order (one key, one partition). The same event twice (the same
`event_id`: a record sent again after a crash) changes nothing. A retirement keeps the last text
(the history shows what was retired); a later publication brings the entry back.
"""

from __future__ import annotations

import msgspec

from projections.reducers.common import origin_of
from projections.state import LibraryRevision, LibraryState
from schemas.events import ReferencePublished, ReferenceRetired, ReferenceRevised
from schemas.library import content_hash

LibraryEvent = ReferencePublished | ReferenceRevised | ReferenceRetired


def reduce_library(state: LibraryState | None, e: LibraryEvent) -> tuple[LibraryState, list]:
    entry = state if state is not None else LibraryState(e.entry_id)
    if any(r.origin.event_id == e.event_id for r in entry.history):
        return entry, []
    origin = origin_of(e)
    revision = len(entry.history) + 1
    if isinstance(e, ReferenceRetired):
        step = LibraryRevision(revision, "retired", entry.version, None, e.reason, origin)
        return msgspec.structs.replace(entry, status="retired", history=(*entry.history, step)), []
    content = content_hash(e.entry)
    version = entry.version + 1 if content != entry.content else entry.version
    action = "published" if entry.status != "published" else "revised"
    step = LibraryRevision(revision, action, version, e.entry, None, origin)
    return msgspec.structs.replace(
        entry, entry=e.entry, status="published", version=version, content=content,
        origin=entry.origin if entry.origin is not None else origin, as_of=origin.source_ts,
        history=(*entry.history, step),
    ), []
