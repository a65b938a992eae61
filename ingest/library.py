"""`svc ingest reference DIR`: the library's files into `reference.*` events on `feed.reference`.

The library root holds one folder per kind (`term/`, `law/`, ...), one Markdown file per entry
(schemas/library.py says the format). What a run appends, and when a file is dead-lettered
instead, is the same for every kind of content (ingest/content.py); here: where the files are,
how one is parsed, and the rules across files.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import datetime, time as day_start, timezone
from pathlib import Path

from ingest import content
from ingest.content import ContentFile, ContentKind, Known
from ingest.event_log import EventLog
from ingest.summary import Summary
from infra.settings import Settings
from schemas.events import ReferencePublished, ReferenceRetired, ReferenceRevised
from schemas.library import KINDS, EntryError, LibraryEntry, entry_id, file_hash, load_entry

SOURCE = "reference"  # the adapter name dead letters carry


def _as_of(entry: LibraryEntry) -> datetime:
    return datetime.combine(entry.reviewed_at, day_start(0), timezone.utc)


LIBRARY = ContentKind(
    source=SOURCE, id_of=entry_id, published=ReferencePublished, revised=ReferenceRevised, retired=ReferenceRetired,
    file_hash=file_hash, as_of=_as_of,
)


def library_root() -> Path:
    """The library shipped with the service: `content/reference` (a package, so an installed
    service has it too)."""
    import content as shipped

    return Path(shipped.__file__).resolve().parent / "reference"


def read_library(root: Path) -> list[ContentFile]:
    """Every `*.md` file under `root` (README files aside), parsed, in path order."""
    return check_library(content.read_files(root, "*.md", parse_file))


def parse_file(rel: str, raw: str) -> ContentFile:
    parts = rel.split("/")
    if len(parts) != 2:
        return ContentFile(rel, raw, error=f"an entry lives in a kind folder ({', '.join(KINDS)}), as <kind>/<slug>.md")
    kind, name = parts
    try:
        return ContentFile(rel, raw, entry=load_entry(kind, name.removesuffix(".md"), raw))
    except EntryError as exc:
        return ContentFile(rel, raw, error=str(exc))


def check_library(files: list[ContentFile]) -> list[ContentFile]:
    """Rules across files: a slug names one file only; `related` names entries of the library."""
    out = content.unique_slugs(files)
    slugs = {f.slug for f in out if f.entry is not None}
    checked = []
    for f in out:
        if f.entry is not None:
            unknown = [s for s in f.entry.related if s not in slugs]
            if unknown:
                f = f.refused(f"related names no entry of the library: {', '.join(unknown)}")
        checked.append(f)
    return checked


def known_entries(events: Iterable) -> dict[str, Known]:
    """Fold the log's `reference.*` events (in log order) into what it says per entry."""
    return content.known_entries(events, LIBRARY)


def plan(files: list[ContentFile], known: dict[str, Known], now: datetime) -> tuple[list, list]:
    return content.plan(files, known, now, LIBRARY)


async def ingest_library(root: Path, log: EventLog, settings: Settings) -> Summary:
    started = time.perf_counter()
    return await content.append_content([(LIBRARY, read_library(root))], log, settings, started)
