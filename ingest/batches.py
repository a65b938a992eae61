"""The pure middle of a run: group items into batches and turn a resolved batch into events.

Events are stamped here (deterministic `event_id`) and exact repeats within a run dropped:
the same team named on every row of a file is one event. Each is encoded once, for its ID
and for the log alike (`stamp_encoded`). Every event is checked against
the bounds (schemas/bounds.py) before it can reach the log: a price quote outside them is
dead-lettered alone, any other event takes its whole record with it. A record whose events
cannot be built at all, or that builds an event of a type the log does not know (not in
`schemas.events.AnyEvent`), is dead-lettered with the reason; the batch goes on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from ingest.records import RECORD_ERRORS, Item, Record, Rejected, Resolution, reason_of
from ingest.resolution import MemoryResolver
from schemas.bounds import event_problem
from schemas.events import AnyEvent, PriceQuoted, event_key, event_topic, require_registered, stamp_encoded

BATCH_RECORDS = 256
# ... and at most about this much source text: a record of some sources is large (an Odds API
# game holds ~60 quotes), and a run's first and last batches are not overlapped (the first is
# built before anything is sent, the last is sent after everything is built): 256 games are
# ~16,000 events, a quarter of a season's file, 512 KiB ~2,600
BATCH_TEXT = 512 * 1024


@dataclass(slots=True)
class Batch:
    records: list[Record] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    indices: set[int] = field(default_factory=set)  # source records seen in this batch


# The first batches are smaller (an eighth of `text`, a quarter, a half, then all of it): nothing
# is sent until the first batch is built (and a worker builds it only once it has read the
# second), so a run's start waits on them; the bench file's first send came ~2 full batches
# (~7,000 events of parse and build) into the run, now ~1,300 events in.
RAMP = 3


def batched(items: Iterable[Item], size: int = BATCH_RECORDS, text: int = BATCH_TEXT) -> Iterator[Batch]:
    """`size` records a batch, or fewer whose source text reaches `text` characters (the first
    RAMP batches: `text` halved RAMP times, then once less each batch)."""
    batch = Batch()
    chars = 0
    ramp = RAMP
    for item in items:
        if isinstance(item, Record):
            batch.records.append(item)
            chars += len(item.raw)
        else:
            batch.rejected.append(item)
        batch.indices.add(item.index)
        if len(batch.records) >= size or chars >= text >> ramp:
            yield batch
            batch = Batch()
            chars = 0
            ramp = max(ramp - 1, 0)
    if batch.records or batch.rejected:
        yield batch


class RunState:
    """Event IDs already produced in this run: a repeat is the same event, not a new one."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.records: set[int] = set()


@dataclass(slots=True)
class Built:
    events: list[AnyEvent]  # stamped, new in this run
    values: list[bytes]  # each event as the log gets it (encoded once, with its ID)
    rejected: list[Rejected]

    def keyed(self) -> list[tuple[str, bytes, bytes]]:
        """Each event as the producer sends it: (base topic, key, value)."""
        return [(event_topic(e), event_key(e).encode(), v) for e, v in zip(self.events, self.values)]


def build(batch: Batch, resolution: Resolution, state: RunState) -> Built:
    """The batch's new (stamped, de-duplicated) events, encoded, and every rejected part."""
    rejected: list[Rejected] = []
    events: list[AnyEvent] = []
    values: list[bytes] = []
    seen = state.seen
    for event in checked_events(batch, resolution, rejected):
        stamped, value = stamp_encoded(event)
        if stamped.event_id not in seen:
            seen.add(stamped.event_id)
            events.append(stamped)
            values.append(value)
    state.records.update(batch.indices)
    return Built(events, values, rejected)


def checked_events(batch: Batch, resolution: Resolution, rejected: list[Rejected]) -> Iterator[AnyEvent]:
    """The batch's events inside the bounds, in order, not stamped yet; each rejected part (the
    batch's own first) is appended to `rejected` as it is met."""
    rejected.extend(batch.rejected)
    for record in batch.records:
        try:
            out = record.build(resolution)
            if not isinstance(out, Rejected):
                require_registered(out)  # an event the log has no key for: its record is dead-lettered
        except RECORD_ERRORS as exc:
            out = Rejected(record.index, record.location, record.raw, reason_of(exc))
        if isinstance(out, Rejected):
            rejected.append(out)
            continue
        out, problem = _within_bounds(record, out, rejected)
        if problem is not None:
            rejected.append(problem)
            continue
        yield from out


@dataclass(slots=True)
class Prepared:
    """One batch, built: what the run appends and counts."""

    event_ids: list[str]
    records: list[tuple[str, bytes, bytes]]  # (base topic, key, value), as the producer sends them
    types: Counter  # events per event type
    rejected: list[Rejected]
    records_read: int  # source records read so far in the run


def prepare(batch: Batch, resolution: Resolution, state: RunState) -> Prepared:
    built = build(batch, resolution, state)
    return Prepared([e.event_id for e in built.events], built.keyed(), Counter(type(e).__name__ for e in built.events),
                    built.rejected, len(state.records))


def _within_bounds(record: Record, events: list[AnyEvent], rejected: list[Rejected]) -> tuple[list[AnyEvent], Rejected | None]:
    """The record's events inside the bounds; a quote outside them is rejected alone (into
    `rejected`), any other event rejects the whole record (returned)."""
    kept: list[AnyEvent] = []
    checked = record.quotes_checked
    for event in events:
        problem = event_problem(event, quote_numbers_checked=checked and type(event) is PriceQuoted)
        if problem is None:
            kept.append(event)
        elif isinstance(event, PriceQuoted):
            where = f"{record.location} ({event.book} {event.market_type} quote)"
            rejected.append(Rejected(record.index, where, record.raw, problem))
        else:
            return [], Rejected(record.index, record.location, record.raw, f"{type(event).__name__}: {problem}")
    return kept, None


@dataclass(slots=True)
class Collected:
    events: list[AnyEvent]
    rejected: list[Rejected]
    records: int


def collect(items: Iterable[Item], resolver: MemoryResolver, state: RunState | None = None) -> Collected:
    """Every event and rejection of a parsed file, resolved in memory (no log, no registry)."""
    state = state or RunState()
    events: list[AnyEvent] = []
    rejected: list[Rejected] = []
    for batch in batched(items):
        built = build(batch, resolver.resolve_now(batch.records), state)
        events.extend(built.events)
        rejected.extend(built.rejected)
    return Collected(events, rejected, len(state.records))
