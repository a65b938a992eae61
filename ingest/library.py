"""`svc ingest reference DIR`: the library's files into `reference.*` events on `feed.reference`.

The library root holds one folder per kind (`term/`, `law/`, ...), one Markdown file per entry
(schemas/library.py says the format). A run reads every file, asks the log what it already
says about each entry (the `feed.reference` topic, read whole: it is small), and appends only
what changed:

- a file whose entry the log does not hold, or holds as retired: `reference.published`;
- a file that differs from the entry's last version on the log: `reference.revised`;
- a file that says `status = "retired"` (or `"draft"`: withdrawn until published again), or an
  entry whose file is gone: `reference.retired`;
- a file that does not validate is dead-lettered with its path and reason, and the entry it
  held (if any) stays as the log has it: a broken edit never retires an entry.

Unchanged files make no event, so a second run appends nothing. `plan` is pure; the log is the
only memory (a new, empty log gets the whole library published again).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, time as day_start, timezone
from pathlib import Path

from ingest.event_log import EventLog
from ingest.summary import Summary
from ingest.export import read_log
from infra.settings import Settings
from schemas.datasets import FEED_REFERENCE
from schemas.deadletter import DeadLetter
from schemas.events import ReferencePublished, ReferenceRetired, ReferenceRevised, decode, stamp
from schemas.library import KINDS, EntryError, LibraryEntry, entry_id, file_hash, load_entry

SOURCE = "reference"  # the adapter name dead letters carry
READ_LIMIT = 1_000_000  # bytes: an entry file larger than this is a mistake, not an entry


def library_root() -> Path:
    """The library shipped with the service: `content/reference` (a package, so an installed
    service has it too)."""
    import content

    return Path(content.__file__).resolve().parent / "reference"


@dataclass(frozen=True, slots=True)
class EntryFile:
    path: str  # relative to the library root, with '/' separators
    raw: str
    entry: LibraryEntry | None = None
    error: str | None = None  # why it is not an entry (then `entry` is None)

    @property
    def slug(self) -> str:
        return Path(self.path).stem


@dataclass(slots=True)
class Known:
    """What the log says about one entry: how many events it has, and its file as last published."""

    revision: int = 0
    hash: str | None = None  # file_hash of the last published or revised entry; None when retired
    slug: str = ""


def read_library(root: Path) -> list[EntryFile]:
    """Every `*.md` file under `root` (README files aside), parsed, in path order."""
    files: list[EntryFile] = []
    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(root).as_posix()
        if path.name.lower() == "readme.md":
            continue
        try:
            if path.stat().st_size > READ_LIMIT:
                files.append(EntryFile(rel, "", error=f"the file is larger than {READ_LIMIT} bytes"))
                continue
            raw = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            files.append(EntryFile(rel, "", error="the file is not UTF-8 text"))
            continue
        files.append(parse_file(rel, raw))
    return check_library(files)


def parse_file(rel: str, raw: str) -> EntryFile:
    parts = rel.split("/")
    if len(parts) != 2:
        return EntryFile(rel, raw, error=f"an entry lives in a kind folder ({', '.join(KINDS)}), as <kind>/<slug>.md")
    kind, name = parts
    try:
        return EntryFile(rel, raw, entry=load_entry(kind, name.removesuffix(".md"), raw))
    except EntryError as exc:
        return EntryFile(rel, raw, error=str(exc))


def check_library(files: list[EntryFile]) -> list[EntryFile]:
    """Rules across files: a slug is the entry's identity, so it names one file only; `related`
    names entries of the library."""
    out: list[EntryFile] = []
    first: dict[str, str] = {}
    for f in files:
        if f.entry is not None and f.slug in first:
            f = EntryFile(f.path, f.raw, error=f"slug {f.slug!r} is already used by {first[f.slug]}")
        elif f.entry is not None:
            first[f.slug] = f.path
        out.append(f)
    slugs = set(first)
    checked = []
    for f in out:
        if f.entry is not None:
            unknown = [s for s in f.entry.related if s not in slugs]
            if unknown:
                f = EntryFile(f.path, f.raw, error=f"related names no entry of the library: {', '.join(unknown)}")
        checked.append(f)
    return checked


def known_entries(events: Iterable) -> dict[str, Known]:
    """Fold the log's `reference.*` events (in log order) into what it says per entry."""
    known: dict[str, Known] = {}
    seen: set[str] = set()
    for e in events:
        if e.event_id in seen:  # a record sent twice (a crash between send and record)
            continue
        seen.add(e.event_id)
        k = known.setdefault(e.entry_id, Known())
        k.revision += 1
        if isinstance(e, ReferenceRetired):
            k.hash, k.slug = None, e.slug
        else:
            k.hash, k.slug = file_hash(e.entry), e.entry.slug
    return known


def _as_of(entry: LibraryEntry) -> datetime:
    return datetime.combine(entry.reviewed_at, day_start(0), timezone.utc)


def plan(files: list[EntryFile], known: dict[str, Known], now: datetime) -> tuple[list, list[DeadLetter]]:
    """The events that bring the log to what the files say, and a dead letter per bad file."""
    events: list = []
    letters: list[DeadLetter] = []
    present: set[str] = set()
    for f in files:
        present.add(entry_id(f.slug))
        if f.entry is None:
            letters.append(DeadLetter(source=SOURCE, file=f.path, location=f.path, reason=f.error or "invalid",
                                      raw=f.raw, ingest_ts=now))
            continue
        e = f.entry
        eid = entry_id(e.slug)
        k = known.get(eid, Known())
        live = k.hash is not None
        if e.status == "published":
            if live and k.hash == file_hash(e):
                continue
            kind = ReferenceRevised if live else ReferencePublished
            events.append(kind(
                source=e.source, source_id=e.slug, source_ts=_as_of(e), ingest_ts=now, entry_id=eid,
                revision=k.revision + 1, path=f.path, entry=e,
            ))
        elif live:
            reason = "status retired" if e.status == "retired" else "status draft (withdrawn until published again)"
            events.append(ReferenceRetired(
                source=e.source, source_id=e.slug, source_ts=now, ingest_ts=now, entry_id=eid,
                revision=k.revision + 1, slug=e.slug, reason=reason,
            ))
    for eid, k in sorted(known.items()):
        if k.hash is not None and eid not in present:
            events.append(ReferenceRetired(
                source="svc editorial", source_id=k.slug, source_ts=now, ingest_ts=now, entry_id=eid,
                revision=k.revision + 1, slug=k.slug, reason="file removed",
            ))
    return [stamp(e) for e in events], letters


async def read_known(settings: Settings, log: EventLog) -> dict[str, Known]:
    events = [decode(r.value) async for r in read_log(settings, log.dataset, bases=(FEED_REFERENCE,))]
    return known_entries(events)


async def ingest_library(root: Path, log: EventLog, settings: Settings) -> Summary:
    started = time.perf_counter()
    now = datetime.now(timezone.utc)
    files = read_library(root)
    known = await read_known(settings, log)
    events, letters = plan(files, known, now)
    accepted, duplicate = await log.append(events, letters)
    summary = Summary(records=len(files), dead_lettered=len(letters), events=len(events), accepted=accepted,
                      duplicate=duplicate)
    summary.by_type.update(type(e).__name__ for e in events)
    summary.reasons.update(d.reason for d in letters)
    summary.seconds = time.perf_counter() - started
    summary.events_per_second = round(summary.events / summary.seconds, 1) if summary.seconds else 0.0
    return summary
