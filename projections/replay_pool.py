"""Replay by partition in worker processes: the bulk path of rebuild and verify on many cores.

A replay is CPU-bound in the fold (docs/benchmarks.md), and one Python process folds on one
core. State is per log key and every key lives in exactly one partition of one feed topic, so
partitions fold independently: each worker owns a fixed set of partitions for the life of the
pool, keeps the state of their keys in memory, and runs the ordinary catch-up (`replay.catch_up`:
plain consumer, batch core, one transaction per batch with its tracking rows) into the same
scratch schema. The few rows several keys share are written so that the order of commits does
not matter (sports and competitions keep the newest input; seasons are recomputed under a lock,
see `pg_writer`), so the schema comes out the same as from one process: `verify` compares
exactly that, and the tests do too.

Protocol (JSON lines): the parent writes one `open` line, then a `catch_up` line per round, to
a worker's stdin; the worker answers each round with one line on stdout (applied records and
its committed offsets, or the error). A worker whose stdin closes (the parent ended or died)
exits; mid-round it exits at once, so no worker outlives its rebuild.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from infra.settings import Settings
from projections.batch import TP

log = logging.getLogger("projections.replay_pool")


class Open(msgspec.Struct, tag="open"):
    settings: dict[str, Any]
    dataset: str
    schema: str
    epoch: str
    batch_records: int
    write_every: int | None = None


class CatchUp(msgspec.Struct, tag="catch_up"):
    targets: list[tuple[str, int, int]]  # (topic, partition, exclusive end offset)
    publish: bool


class Done(msgspec.Struct):
    applied: int = 0
    committed: list[tuple[str, int, int]] = []  # (topic, partition, last offset applied)
    error: str | None = None


Command = Open | CatchUp


def assign(remaining: dict[TP, int], workers: int) -> list[list[TP]]:
    """Partitions over at most `workers` groups, the largest first onto the least loaded group
    (longest-processing-time first). Pure; the same input gives the same groups."""
    loads = [0] * max(1, workers)
    groups: list[list[TP]] = [[] for _ in loads]
    for tp, n in sorted(remaining.items(), key=lambda item: (-item[1], item[0])):
        least = min(range(len(loads)), key=lambda i: (loads[i], i))
        groups[least].append(tp)
        loads[least] += n
    return [g for g in groups if g]


def _settings_record(settings: Settings) -> dict[str, Any]:
    record = msgspec.structs.asdict(settings)
    record["data_dir"] = str(settings.data_dir)
    return record


@dataclass
class _Worker:
    proc: asyncio.subprocess.Process
    partitions: list[TP]
    committed: dict[TP, int] = field(default_factory=dict)


class ReplayPool:
    """Worker processes that each fold a fixed share of the partitions into one schema."""

    def __init__(self, workers: list[_Worker]) -> None:
        self._workers = workers

    @classmethod
    async def start(cls, settings: Settings, dataset: str, schema: str, epoch: str, groups: list[list[TP]],
                    batch_records: int, write_every: int | None = None) -> "ReplayPool":
        workers = []
        try:
            for partitions in groups:
                proc = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "projections.replay_pool",
                    stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                )
                workers.append(_Worker(proc, partitions))
                opening = Open(_settings_record(settings), dataset, schema, epoch, batch_records, write_every)
                proc.stdin.write(msgspec.json.encode(opening) + b"\n")
            pool = cls(workers)
            await asyncio.gather(*(w.proc.stdin.drain() for w in workers))
            # every worker has loaded its state before any writes a batch
            await asyncio.gather(*(pool._answer(w) for w in workers))
        except BaseException:
            for w in workers:
                w.proc.kill()
            raise
        log.info("%s: replaying with %d worker processes over %s partitions", schema, len(workers),
                 [len(w.partitions) for w in workers])
        return pool

    @property
    def committed(self) -> dict[TP, int]:
        return {tp: offset for w in self._workers for tp, offset in w.committed.items()}

    async def catch_up(self, targets: dict[TP, int], publish: bool) -> int:
        """Every worker catches its partitions up to `targets` (exclusive ends); the records applied."""
        self._own_new(targets)
        results = await asyncio.gather(*(self._round(w, targets, publish) for w in self._workers),
                                       return_exceptions=True)
        failures = [r for r in results if isinstance(r, BaseException)]
        if failures:
            await self.close(kill=True)
            raise failures[0]
        return sum(results)  # type: ignore[arg-type]

    def _own_new(self, targets: dict[TP, int]) -> None:
        """A partition created after the pool started (nothing of it folded anywhere yet) goes
        to the worker with the fewest partitions."""
        owned = {tp for w in self._workers for tp in w.partitions}
        for tp in sorted(set(targets) - owned):
            min(self._workers, key=lambda w: len(w.partitions)).partitions.append(tp)

    async def _round(self, w: _Worker, targets: dict[TP, int], publish: bool) -> int:
        mine = [(t, p, targets[(t, p)]) for t, p in w.partitions if (t, p) in targets]
        try:
            w.proc.stdin.write(msgspec.json.encode(CatchUp(mine, publish)) + b"\n")
            await w.proc.stdin.drain()
        except (ConnectionError, BrokenPipeError) as exc:
            raise RuntimeError(f"a replay worker is gone ({exc!r})") from exc
        return await self._answer(w)

    @staticmethod
    async def _answer(w: _Worker) -> int:
        line = await w.proc.stdout.readline()
        if not line:
            code = await w.proc.wait()
            raise RuntimeError(f"a replay worker exited ({code}) before answering")
        done = msgspec.json.decode(line, type=Done)
        if done.error is not None:
            raise RuntimeError(f"a replay worker failed: {done.error}")
        w.committed.update({(t, p): o for t, p, o in done.committed})
        return done.applied

    async def close(self, kill: bool = False) -> None:
        for w in self._workers:
            if w.proc.returncode is not None:
                continue
            if kill:
                try:
                    w.proc.kill()
                except ProcessLookupError:
                    pass
            elif w.proc.stdin is not None and not w.proc.stdin.is_closing():
                w.proc.stdin.close()
        for w in self._workers:
            try:
                await asyncio.wait_for(w.proc.wait(), 30)
            except asyncio.TimeoutError:
                w.proc.kill()
                await w.proc.wait()


# ---- the worker -------------------------------------------------------------------------------


class _Stdin:
    """Command lines from the parent, read on a thread. End of input while a round runs means
    the parent is gone: exit at once (Postgres rolls back the open transaction)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.busy = False
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for line in sys.stdin.buffer:
                self.loop.call_soon_threadsafe(self.lines.put_nowait, line)
            if self.busy:
                os._exit(1)
            self.loop.call_soon_threadsafe(self.lines.put_nowait, None)
        except RuntimeError:  # the loop closed: the worker is ending anyway
            pass


async def _work() -> None:
    from infra.db import connect
    from infra.logs import configure_logging
    from projections.projector import DatasetProjector
    from projections.replay import catch_up

    stdin = _Stdin(asyncio.get_running_loop())
    first = await stdin.lines.get()
    if first is None:
        return
    opening = msgspec.json.decode(first, type=Command)
    assert isinstance(opening, Open), "a replay worker starts with `open`"
    record = dict(opening.settings)
    data_dir = Path(record.pop("data_dir"))  # msgspec does not convert Path
    settings = msgspec.structs.replace(msgspec.convert(record, Settings, strict=False), data_dir=data_dir)
    configure_logging(settings, "replay-worker")
    conn = await connect(settings.require_database())
    try:
        projector = DatasetProjector(settings, opening.dataset, schema=opening.schema,  # type: ignore[arg-type]
                                     publish=False, use_cache=False)
        await projector.open(conn, opening.epoch)
        _answer(Done())
        while (line := await stdin.lines.get()) is not None:
            command = msgspec.json.decode(line, type=Command)
            assert isinstance(command, CatchUp), "after `open`, only `catch_up`"
            stdin.busy = True
            try:
                projector.core.publish = command.publish
                targets = {(t, p): end for t, p, end in command.targets}
                applied = await catch_up(projector, conn, targets=targets, batch_records=opening.batch_records,
                                         write_every=opening.write_every) if targets else 0
                mine = set(targets)
                done = Done(applied, [(t, p, o) for (t, p), o in sorted(projector.committed.items()) if (t, p) in mine])
            except Exception as exc:  # reported to the parent, which fails the rebuild
                log.exception("replay round failed")
                done = Done(error=repr(exc)[:500])
            finally:
                stdin.busy = False
            _answer(done)
    finally:
        await conn.close()


def _answer(done: Done) -> None:
    sys.stdout.buffer.write(msgspec.json.encode(done) + b"\n")
    sys.stdout.buffer.flush()


def main() -> None:
    code = 0
    try:
        asyncio.run(_work())
    except BaseException:
        log.exception("replay worker failed")
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    # not a normal interpreter exit: the stdin reader thread may be blocked in a read
    os._exit(code)


if __name__ == "__main__":
    main()
