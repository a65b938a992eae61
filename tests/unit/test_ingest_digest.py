"""What ingest makes of the sample files and of damaged copies of them, pinned by a digest: every
event (its ID, topic, key and bytes, in order), every event type count and every dead letter
(location, reason, raw text), through both ways a run builds its batches: inline (`prepare`)
and as the worker process hands them over (`worker._built`, stamped by the run's side).

A change meant to make ingest cheaper must leave this digest as it is; a change of what ingest
writes must change it on purpose (and say so). The damage is deterministic: truncated files,
bytes that are not UTF-8, signs and digits changed, lines dropped and repeated; and two Odds API
files with bad markets mixed in (tests/unit/test_ingest_worker.py `hostile_odds`)."""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import pytest

from ingest import odds_api, worker
from ingest.batches import Prepared, RunState, batched, prepare
from ingest.records import FormatError
from ingest.resolution import MemoryResolver
from ingest.samples import live_files
from tests.unit.test_ingest_worker import hostile_odds

TS = datetime(2031, 5, 6, 7, 8, 9, tzinfo=timezone.utc)

# the digest of everything below as main had it before ingest's costs were cut (2026-11-27)
PINNED = "d88c76604bf53ce80308222070b620d905aaedd5f486cf83cad014a9fc99510b"


def _damaged(data: bytes) -> list[bytes]:
    """Five deterministic damaged copies of a file."""
    lines = data.splitlines(keepends=True)
    middle = len(data) // 2
    return [
        data[: len(data) * 2 // 3],  # cut short
        data[:middle] + b"\xff\xfe" + data[middle + 2:],  # not UTF-8 in the middle
        data.replace(b"-1", b"+1").replace(b"1.", b"9."),  # signs and decimals changed
        b"".join(line for i, line in enumerate(lines) if i % 7 != 3),  # lines dropped
        b"".join(line * (2 if i % 5 == 1 else 1) for i, line in enumerate(lines)),  # lines repeated
    ]


def _inline(items) -> list[Prepared]:
    resolver, state = MemoryResolver(), RunState()
    return [prepare(batch, resolver.resolve_now(batch.records), state) for batch in batched(items)]


class _RunSide(worker.ParseWorker):
    """The run's side of a worker without a process: only its stamping of built batches."""

    def __init__(self) -> None:  # noqa: D107 - no pipes, no child
        self._seen = set()


def _forked(items) -> list[Prepared]:
    resolver, state, run = MemoryResolver(), RunState(), _RunSide()
    out = []
    for batch in batched(items):
        _, events, rejected, records_read = pickle.loads(worker._built(batch, resolver.resolve_now(batch.records), state))
        out.append(run._stamped(*worker._events_in.decode(events), rejected, records_read))
    return out


def _digest_of(parse: Callable, path: Path, build: Callable) -> bytes:
    h = hashlib.sha256()
    try:
        parsed = parse(path, TS)
        batches = build(parsed.items)
    except FormatError as exc:
        h.update(f"format error: {exc}".encode())
        return h.digest()
    h.update(f"{parsed.source} {parsed.total}".encode())
    for p in batches:
        h.update(repr((p.records_read, sorted(p.types.items()))).encode())
        for event_id, (topic, key, value) in zip(p.event_ids, p.records, strict=True):
            h.update(b"\0".join((event_id.encode(), topic.encode(), key, value)))
        for r in p.rejected:
            h.update(repr((r.index, r.location, r.raw, r.reason)).encode("utf-8", "surrogateescape"))
    return h.digest()


def _files(tmp_path: Path) -> list[tuple[Callable, Path]]:
    out = []
    for parse, path in live_files():
        out.append((parse, path))
        for n, data in enumerate(_damaged(path.read_bytes())):
            copy = tmp_path / f"{n}-{path.name}"
            copy.write_bytes(data)
            out.append((parse, copy))
    # and Odds API files with bad markets among good ones (the damage above mostly breaks JSON)
    for seed in (3, 4):
        out.append((odds_api.parse, hostile_odds(tmp_path / f"hostile-{seed}.json", games=60, books=8, seed=seed)))
    return out


@pytest.mark.parametrize("build", [_inline, _forked], ids=["inline", "worker"])
def test_what_ingest_makes_of_the_samples_and_damaged_copies_is_pinned(tmp_path, build):
    files = _files(tmp_path)
    assert len(files) == 50  # the eight sample files, five damaged copies of each, two hostile files
    total = hashlib.sha256()
    for parse, path in files:
        total.update(_digest_of(parse, path, build))
    assert total.hexdigest() == PINNED
