"""The Replay fold slice of docs/benchmarks.md: 68 games x 8 books x 3 markets x 40 rounds of the
bench's season log (plus the 68 schedules: 65,348 events), encoded as on the log and folded in
memory by `BatchCore.feed` as a rebuild folds them (publish=False, 20,000 records at a time), so
its instructions can be counted apart from the broker and Postgres:

    PYTHONPATH=. PYTHONHASHSEED=0 valgrind --tool=callgrind \
        --toggle-collect='CPyDef_batch___BatchCore___feed' .venv/bin/python -m tests.perf.replay_slice

Prints the events, deltas made and (`--digest`) a digest of every key's final state, to check
that a change folds the same. Refuses to run from a stale or missing compiled build.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass

GAMES, BOOKS, ROUNDS, CHUNK = 68, [f"book{i}" for i in range(8)], 40, 8  # the bench's books and chunks
WINDOW_US = 3600 * 1_000_000  # the default consensus window (infra.settings)


@dataclass
class Record:
    topic: str
    partition: int
    offset: int
    value: bytes


def records() -> list[Record]:
    from schemas.events import encode
    from tests.support import projection_events as ev

    games = ev.schedule(GAMES)
    events: list = list(games)
    for first in range(0, ROUNDS, CHUNK):
        events += ev.season_quotes(games, BOOKS, min(CHUNK, ROUNDS - first), seed=first, first_minute=first,
                                   tag=f"r{first}")
    return [Record("feed.games", 0, i, encode(e)) for i, e in enumerate(events)]


def main() -> None:
    from projections import compiled

    if compiled.stale() or not compiled.built():
        sys.exit("the compiled fold is stale or missing: `make venv` first")
    import msgspec

    from projections.batch import BatchCore, Fold
    from projections.lines import fields_of

    recs = records()
    core = BatchCore(WINDOW_US, publish=False)
    fold = Fold()
    for i in range(0, len(recs), 20_000):
        core.feed(fold, recs[i:i + 20_000])
    print(f"events {len(recs)} applied {fold.applied} deltas made {fold.made} bad {len(fold.bad)}")
    if "--digest" in sys.argv:
        encoder = msgspec.msgpack.Encoder(enc_hook=fields_of)
        h = hashlib.sha256()
        for key in sorted(core.states):
            h.update(key.encode())
            h.update(encoder.encode(core.states[key]))
        print("digest", h.hexdigest())


if __name__ == "__main__":
    main()
