"""The service's content files into events: what the reference library, the strategies and the
recipes share (`ingest/library.py`, `ingest/strategies.py` say what is particular to each).

A run reads every file, asks the log what it already says about each entry (the
`feed.reference` topic, read whole: it is small), and appends only what changed:

- a file whose entry the log does not hold, or holds as retired: `<kind>.published`;
- a file that differs from the entry's last version on the log: `<kind>.revised`;
- a file that says `status = "retired"` (or `"draft"`: withdrawn until published again), or an
  entry whose file is gone: `<kind>.retired`;
- a file that does not validate is dead-lettered with its path and reason, and the entry it
  held (if any) stays as the log has it: a broken edit never retires an entry.

Unchanged files make no event, so a second run appends nothing. `plan` is pure; the log is the
only memory (a new, empty log gets everything published again).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ingest.event_log import EventLog
from ingest.export import read_log
from ingest.summary import Summary
from infra.settings import Settings
from schemas.datasets import FEED_REFERENCE
from schemas.deadletter import DeadLetter, make_dead_letter
from schemas.events import decode, stamp

READ_LIMIT = 1_000_000  # bytes: a content file larger than this is a mistake, not an entry


@dataclass(frozen=True, slots=True)
class ContentFile:
    path: str  # relative to the content root, with '/' separators
    raw: str
    entry: Any = None  # the record (None when the file is not valid)
    error: str | None = None  # why it is not an entry (then `entry` is None)

    @property
    def slug(self) -> str:
        return Path(self.path).stem

    def refused(self, reason: str) -> ContentFile:
        return ContentFile(self.path, self.raw, error=reason)


@dataclass(frozen=True)
class ContentKind:
    """One kind of content: how its files become events."""

    source: str  # the adapter name its dead letters carry
    id_of: Callable[[str], str]  # slug -> entry ID (the log key)
    published: type
    revised: type
    retired: type
    file_hash: Callable[[Any], str]
    as_of: Callable[[Any], datetime]  # when a published file's text was true (its review day)

    @property
    def events(self) -> tuple[type, ...]:
        return (self.published, self.revised, self.retired)


@dataclass(slots=True)
class Known:
    """What the log says about one entry: how many events it has, and its file as last published."""

    revision: int = 0
    hash: str | None = None  # file_hash of the last published or revised entry; None when retired
    slug: str = ""


def read_files(root: Path, pattern: str, parse: Callable[[str, str], ContentFile]) -> list[ContentFile]:
    """Every file under `root` matching `pattern` (README files aside), parsed, in path order."""
    files: list[ContentFile] = []
    if not root.is_dir():
        return files
    for path in sorted(root.rglob(pattern)):
        rel = path.relative_to(root).as_posix()
        if path.stem.lower() == "readme":
            continue
        try:
            if path.stat().st_size > READ_LIMIT:
                files.append(ContentFile(rel, "", error=f"the file is larger than {READ_LIMIT} bytes"))
                continue
            raw = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            files.append(ContentFile(rel, "", error="the file is not UTF-8 text"))
            continue
        files.append(parse(rel, raw))
    return files


def unique_slugs(files: list[ContentFile]) -> list[ContentFile]:
    """A slug is an entry's identity, so it names one file only; later files that reuse one are refused."""
    first: dict[str, str] = {}
    out = []
    for f in files:
        if f.entry is not None and f.slug in first:
            f = f.refused(f"slug {f.slug!r} is already used by {first[f.slug]}")
        elif f.entry is not None:
            first[f.slug] = f.path
        out.append(f)
    return out


def known_entries(events: Iterable, kind: ContentKind) -> dict[str, Known]:
    """Fold the log's events of this kind (in log order) into what it says per entry."""
    known: dict[str, Known] = {}
    seen: set[str] = set()
    for e in events:
        if not isinstance(e, kind.events) or e.event_id in seen:  # another kind, or a record sent twice
            continue
        seen.add(e.event_id)
        k = known.setdefault(e.entry_id, Known())
        k.revision += 1
        if isinstance(e, kind.retired):
            k.hash, k.slug = None, e.slug
        else:
            k.hash, k.slug = kind.file_hash(e.entry), _slug(e.entry)
    return known


def _slug(entry: Any) -> str:
    """The file name an entry came from: its slug, or a recipe's chain ID."""
    return getattr(entry, "slug", None) or entry.id


def plan(files: list[ContentFile], known: dict[str, Known], now: datetime,
         kind: ContentKind) -> tuple[list, list[DeadLetter]]:
    """The events that bring the log to what the files say, and a dead letter per bad file."""
    events: list = []
    letters: list[DeadLetter] = []
    present: set[str] = set()
    for f in files:
        present.add(kind.id_of(f.slug))
        if f.entry is None:
            letters.append(make_dead_letter(source=kind.source, file=f.path, location=f.path,
                                            reason=f.error or "invalid", raw=f.raw, ingest_ts=now))
            continue
        e = f.entry
        eid = kind.id_of(f.slug)
        k = known.get(eid, Known())
        live = k.hash is not None
        if e.status == "published":
            if live and k.hash == kind.file_hash(e):
                continue
            step = kind.revised if live else kind.published
            events.append(step(
                source=e.source, source_id=f.slug, source_ts=kind.as_of(e), ingest_ts=now, entry_id=eid,
                revision=k.revision + 1, path=f.path, entry=e,
            ))
        elif live:
            reason = "status retired" if e.status == "retired" else "status draft (withdrawn until published again)"
            events.append(kind.retired(
                source=e.source, source_id=f.slug, source_ts=now, ingest_ts=now, entry_id=eid,
                revision=k.revision + 1, slug=f.slug, reason=reason,
            ))
    for eid, k in sorted(known.items()):
        if k.hash is not None and eid not in present:
            events.append(kind.retired(
                source="svc editorial", source_id=k.slug, source_ts=now, ingest_ts=now, entry_id=eid,
                revision=k.revision + 1, slug=k.slug, reason="file removed",
            ))
    return [stamp(e) for e in events], letters


async def read_content_log(settings: Settings, log: EventLog) -> list:
    """Every event on the dataset's content topic, in log order."""
    return [decode(r.value) async for r in read_log(settings, log.dataset, bases=(FEED_REFERENCE,))]


async def append_content(parts: list[tuple[ContentKind, list[ContentFile]]], log: EventLog, settings: Settings,
                         started: float) -> Summary:
    """Plan every kind's files against the log and append what changed, in one run."""
    now = datetime.now(timezone.utc)
    logged = await read_content_log(settings, log)
    events: list = []
    letters: list[DeadLetter] = []
    records = 0
    for kind, files in parts:
        e, d = plan(files, known_entries(logged, kind), now, kind)
        events.extend(e)
        letters.extend(d)
        records += len(files)
    accepted, duplicate = await log.append(events, letters)
    summary = Summary(records=records, dead_lettered=len(letters), events=len(events), accepted=accepted,
                      duplicate=duplicate)
    summary.by_type.update(type(e).__name__ for e in events)
    summary.reasons.update(d.reason for d in letters)
    summary.seconds = time.perf_counter() - started
    summary.events_per_second = round(summary.events / summary.seconds, 1) if summary.seconds else 0.0
    return summary
