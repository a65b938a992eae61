"""The batch core every driver shares (faust agents, the aiokafka replay, rebuild):
records in, reducers folded, rows and Wire envelopes out.

Records are skipped at or below the offset already applied for their partition (exactly-once
with the tracking rows written in the same transaction). A record that does not decode is
counted and skipped, never allowed to stop the projector. Each fold can be undone exactly
(`rollback`) because states are immutable between folds: the batch keeps every touched key's
prior state. Within a fold, what the fold itself made is changed in place on later touches
(`Owned`: a key touched a thousand times in a replay batch is copied once, not a thousand times).

A batch may be fed in several chunks (`Fold`, `feed`, `close`): a rebuild folds a few thousand
records at a time (bounded memory) and writes a batch only every so often, since each write
rewrites every key the batch touched. Feeding chunks gives exactly the batch one `fold` of all
of them would.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Iterable, Protocol, cast

import msgspec

from projections.deltas import Delta
from projections.event_time import from_us
from projections.reducers import reduce
from projections.reducers.markets import reduce_market
from projections.reducers.common import Owned, origin_of
from projections.rows import RowSet, batch_rows
from projections.state import GameState, KeyState, Origin
from projections.quote_event import QuoteEvent
from projections.quote_event import decoder as _quote_decoder
from schemas.events import GameScheduled, PlayerRegistered, TeamRegistered, event_key
from schemas.events import decoder as _event_decoder
from schemas.wire import Envelope, encode_envelope

TP = tuple[str, int]
decode_event = _quote_decoder.decode  # quotes with their decimals as text (projections.quote_event)
decode_canonical = _event_decoder.decode  # schemas.events.decode without its Python frame


class Record(Protocol):
    topic: str
    partition: int
    offset: int
    value: bytes


@dataclass
class Batch:
    rows: RowSet
    deltas: list[Delta]  # kept only when the batch publishes (see `delta_count`)
    envelopes: list[tuple[str, int, bytes]]  # (wire topic, seq, envelope bytes)
    tracking: dict[TP, tuple[int, int]]  # partition -> (offset applied before, offset applied now)
    start: dict[str, KeyState | None]
    applied: int = 0
    bad: list[tuple[TP, int, str]] = field(default_factory=list)
    delta_count: int = 0

    @property
    def empty(self) -> bool:
        return not self.tracking


def _ref_origins(event, refs: dict[tuple[str, str], Origin]) -> None:
    origin = origin_of(event)
    for ref in (("sport", event.sport), ("competition", event.competition)):
        current = refs.get(ref)
        if current is None or origin.stamp > current.stamp:
            refs[ref] = origin


def _rejected(value: bytes) -> str | None:
    """Why the canonical decoder rejects a record (None: it does not)."""
    try:
        decode_canonical(value)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        return str(exc)[:200]
    return None


class Fold:
    """A batch being folded: what `close` turns into a `Batch`."""

    def __init__(self) -> None:
        self.start: dict[str, KeyState | None] = {}
        self.deltas: list[Delta] = []
        self.tracking: dict[TP, tuple[int, int]] = {}  # partition -> (offset applied before, newest folded)
        self.refs: dict[tuple[str, str], Origin] = {}
        self.bad: list[tuple[TP, int, str]] = []
        self.applied = 0
        self.made = 0  # deltas made (a rebuild keeps their seqs, not the deltas)
        self.own = Owned()  # what this batch made: changed in place on later touches within it


class BatchCore:
    def __init__(self, window_us: int, publish: bool = True) -> None:
        self.window_us = window_us
        self.publish = publish  # False on rebuilds: those deltas were published by the live run
        self.states: dict[str, KeyState] = {}
        self.tracking: dict[TP, int] = {}  # newest offset folded per partition

    def fold(self, records: Iterable[Record], emit_ts: datetime) -> Batch:
        f = Fold()
        self.feed(f, records)
        return self.close(f, emit_ts)

    def feed(self, f: Fold, records: Iterable[Record]) -> None:
        """Fold `records` into the open batch `f` (nothing else may fold until it is closed)."""
        states, tracking, window_us = self.states, self.tracking, self.window_us
        start, deltas, moved, refs, bad, own = f.start, f.deltas, f.tracking, f.refs, f.bad, f.own
        applied = 0
        made = 0
        publish = self.publish
        # Records come in runs of one partition (a fetch's records of each partition in turn):
        # its newest offset is kept in `last` and written to `tracking` and `moved` when the run
        # ends (and, whatever happens, when this call does), not per record (a replay folds
        # millions). `tracking` and `moved` read afterwards are what per-record writes give.
        tp: TP = ("", -1)  # no partition: the first record starts a run
        topic = ""
        partition = -1
        last = -1  # newest offset folded in `tp`
        known = -1  # `tp`'s newest offset folded before this run
        was = -1  # `tp`'s offset applied before this batch
        try:
            for r in records:
                offset: int = r.offset
                if r.partition != partition or r.topic != topic:
                    if last != known:
                        moved[tp] = (was, last)
                        tracking[tp] = last
                    topic, partition = r.topic, r.partition
                    tp = (topic, partition)
                    known = last = tracking.get(tp, -1)
                    before = moved.get(tp)
                    was = last if before is None else before[0]
                if offset <= last:
                    continue  # already applied: redelivery is a no-op
                last = offset
                try:
                    event = decode_event(r.value)
                except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                    bad.append((tp, r.offset, str(exc)[:200]))
                    continue
                quote = type(event) is QuoteEvent  # most of any log: straight to its reducer
                key = event.game_id if quote else event_key(event)
                state = states.get(key)
                first = key not in start
                if first:
                    start[key] = state
                new: KeyState
                if quote:
                    try:
                        new, out = reduce_market(cast(GameState | None, state), event, window_us, own, publish)
                    except ArithmeticError as exc:
                        # a decimal text that is not a decimal (`quote_event`): the reducer turns the
                        # quote's decimals into Decimals before it changes anything, and the canonical
                        # decoder rejects such a record; if it does not, the error is the reducer's own
                        reason = _rejected(r.value)
                        if reason is None:
                            raise exc
                        if first:
                            del start[key]
                        bad.append((tp, r.offset, reason))
                        continue
                else:
                    new, out = reduce(state, event, window_us, own)
                    # (not for quotes: an isinstance test of a msgspec struct type is not free)
                    if isinstance(event, (GameScheduled, TeamRegistered, PlayerRegistered)):
                        _ref_origins(event, refs)
                if new is not state:
                    states[key] = new
                if out:
                    made += len(out)
                    if publish:
                        deltas.extend(out)
                applied += 1
        finally:
            if last != known:
                moved[tp] = (was, last)
                tracking[tp] = last
        f.applied += applied
        f.made += made

    def close(self, f: Fold, emit_ts: datetime) -> Batch:
        """The batch: rows of every key it touched, as they are now, and its envelopes."""
        rows = batch_rows(f.start, self.states, f.refs, self.window_us)
        envelopes = []
        if self.publish:
            for d in f.deltas:
                envelope = Envelope(
                    op="delta", type=d.type, topic=d.wire_topic, seq=d.seq, source_ts=from_us(d.source_ts),
                    emit_ts=emit_ts, source=d.source, data=d.data,
                )
                envelopes.append((d.wire_topic, d.seq, encode_envelope(envelope)))
        return Batch(rows, f.deltas, envelopes, f.tracking, f.start, f.applied, f.bad, f.made)

    def rollback(self, batch: Batch | Fold) -> None:
        """Undo a batch whose write failed, or one still open (batches folded after it must be
        undone first)."""
        for key, state in batch.start.items():
            if state is None:
                self.states.pop(key, None)
            else:
                self.states[key] = state
        for tp, (before, _) in batch.tracking.items():
            if before < 0:
                self.tracking.pop(tp, None)
            else:
                self.tracking[tp] = before

    def reset(self, states: dict[str, KeyState], tracking: dict[TP, int]) -> None:
        self.states = states
        self.tracking = dict(tracking)

