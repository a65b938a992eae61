"""A run's parse and build in a worker process, pipelined with its sends (issue 18).

Ingest's per-event CPU before any send (the adapter's decode and checks, building and stamping
the events, the bounds backstop) is about three times what a raw produce of the same records
costs, so one process cannot ingest at half the broker's rate. A forked child does that part
while the run's process resolves, sends, awaits the acknowledgements and records them.

Forked, not spawned: the child inherits the parsed file's item iterator and the adapter's
record closures, which cannot be pickled, and starts in a millisecond instead of re-importing
the service. It runs no event loop and touches nothing it inherited but its two pipe ends, and
leaves with `os._exit` (no atexit handler, no flush of the parent's buffers, no finalizer of an
inherited connection).

Per batch the child hands the run the batch's claims and is handed back their resolution, so
the registry stays in the run's process and resolves batches in file order; it then builds the
batch and hands back each event keyed and encoded (`Built.keyed`) with its ID: the run never
decodes or re-encodes an event. Batches come back in file order and are appended in that
order, one at a time as inline (ingest/pipeline.py), so per-entity order, the exactly-once
registry of appended events and the dead letters are the inline path's. The child parses at
most one batch ahead of the resolution it waits for.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import queue
import signal
import threading
import traceback
from collections.abc import Iterable
from multiprocessing.connection import Connection, Pipe
from typing import Any

import msgspec

from ingest.batches import Batch, Prepared, RunState, batched, prepare
from ingest.records import GameClaim, Identity, Item, Record, Rejected, Resolution, WeekGame
from ingest.resolution import claims_of

# below this many source records a run stays inline: a fork and two threads cost more than
# they save on a small file (SVC_INGEST_WORKER=0 keeps every run inline, =1 forks for any size)
WORKER_MIN_RECORDS = 512


def wanted(total_records: int) -> bool:
    setting = os.environ.get("SVC_INGEST_WORKER", "")
    if setting == "0" or not hasattr(os, "fork"):
        return False
    return setting == "1" or total_records >= WORKER_MIN_RECORDS


def _no_events(_resolution: Resolution) -> list:
    return []


def claims_record(claims: list[GameClaim], weeks: list[WeekGame], identities: list[Identity]) -> Record:
    """A batch's distinct claims as one record to resolve (a resolver reads only its claims)."""
    return Record(0, "", "", _no_events, claims=tuple(claims), week_games=tuple(weeks), identities=tuple(identities))


# A built batch's events travel as MessagePack (half of pickle's cost both ways for lists of
# strings and bytes); the rest of the message, which may hold a rejected record's text with
# bytes that were not UTF-8 (lone surrogates, which MessagePack cannot carry), as pickle.
_events_out = msgspec.msgpack.Encoder()
_events_in = msgspec.msgpack.Decoder(tuple[list[str], list[tuple[str, bytes, bytes]]])


def _built(batch: Batch, resolution: Resolution, state: RunState) -> bytes:
    p = prepare(batch, resolution, state)
    events = _events_out.encode((p.event_ids, p.records))
    return pickle.dumps(("built", events, p.types, p.rejected, p.records_read), pickle.HIGHEST_PROTOCOL)


def _child(items: Iterable[Item], out: Connection, into: Connection) -> None:
    """The child's whole life: parse, ask for each batch's resolution, build, hand back."""
    state = RunState()
    waiting: Batch | None = None  # parsed, its claims sent, its resolution not yet read
    for batch in batched(items):
        out.send_bytes(pickle.dumps(("claims", *claims_of(batch.records)), pickle.HIGHEST_PROTOCOL))
        if waiting is not None:
            out.send_bytes(_built(waiting, pickle.loads(into.recv_bytes()), state))
        waiting = batch
    if waiting is not None:
        out.send_bytes(_built(waiting, pickle.loads(into.recv_bytes()), state))
    out.send_bytes(pickle.dumps(("end",), pickle.HIGHEST_PROTOCOL))


def _portable(exc: BaseException) -> bytes:
    """The child's failure as the run raises it: the exception itself when it pickles, else
    its traceback as text."""
    try:
        data = pickle.dumps(("error", exc))
        pickle.loads(data)
        return data
    except Exception:  # noqa: BLE001 - any exception that does not survive pickling
        text = "".join(traceback.format_exception(exc))
        return pickle.dumps(("error", RuntimeError(f"ingest worker failed:\n{text}")))


class WorkerDied(RuntimeError):
    pass


class ParseWorker:
    """The forked child and the run's side of its pipes: `messages()` in order, `resolved()`."""

    def __init__(self, items: Iterable[Item]) -> None:
        to_child_r, to_child_w = Pipe(duplex=False)
        from_child_r, from_child_w = Pipe(duplex=False)
        pid = os.fork()
        if pid == 0:  # the child
            code = 0
            try:
                to_child_w.close()
                from_child_r.close()
                signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends the run in the parent
                _child(items, from_child_w, to_child_r)
            except BaseException as exc:  # noqa: BLE001 - reported to the run, which raises it
                code = 1
                try:
                    from_child_w.send_bytes(_portable(exc))
                except BaseException:  # noqa: BLE001 - the run is gone: nothing to tell
                    pass
            finally:
                os._exit(code)
        self.pid: int | None = pid
        to_child_r.close()
        from_child_w.close()
        self._in, self._out = from_child_r, to_child_w
        self._loop = asyncio.get_running_loop()
        self._messages: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._sends: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        # threads, so that neither side ever waits on a full pipe: the reader drains the child
        # whatever the run is doing, the writer hands it resolutions without blocking the loop
        self._reader = threading.Thread(target=self._read, name="ingest-worker-read", daemon=True)
        self._writer = threading.Thread(target=self._write, name="ingest-worker-write", daemon=True)
        self._reader.start()
        self._writer.start()

    def _read(self) -> None:
        while True:
            try:
                data: bytes | None = self._in.recv_bytes()
            except (EOFError, OSError):
                data = None
            try:
                self._loop.call_soon_threadsafe(self._messages.put_nowait, data)
            except RuntimeError:  # the loop is closed: the run is over
                return
            if data is None:
                return

    def _write(self) -> None:
        while (data := self._sends.get()) is not None:
            try:
                self._out.send_bytes(data)
            except OSError:  # the child is gone: the reader reports it
                return

    async def next(self) -> tuple[Any, ...]:
        data = await self._messages.get()
        if data is None:
            raise WorkerDied(f"the ingest worker (pid {self.pid}) exited without finishing: {self._status()}")
        message = pickle.loads(data)
        if message[0] == "error":
            raise message[1]
        if message[0] == "built":
            _, events, types, rejected, records_read = message
            return ("built", Prepared(*_events_in.decode(events), types, rejected, records_read))
        return message

    def resolved(self, resolution: Resolution) -> None:
        self._sends.put(pickle.dumps(resolution, pickle.HIGHEST_PROTOCOL))

    def _status(self) -> str:
        if self.pid is None:
            return "reaped"
        pid, status = os.waitpid(self.pid, 0)
        self.pid = None
        return f"exit status {os.waitstatus_to_exitcode(status)}"

    def close(self) -> None:
        """Stop the child if it still runs (a failed or cancelled run), reap it, then close the
        pipes once the threads are done with them (the child's end closed, the reader sees EOF)."""
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)  # our own child, not reaped yet: its pid is ours
            except ProcessLookupError:
                pass
            os.waitpid(self.pid, 0)
            self.pid = None
        self._sends.put(None)
        self._writer.join()
        self._reader.join()
        self._out.close()
        self._in.close()
