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
batch (the bounds checked) and hands back each event keyed and encoded, not stamped: the run
stamps the bytes (`stamp_value`: the content ID, a hash, and the ID written in) and drops the
repeats (RunState's rule), so the child, the run's bottleneck, does only the part that needs
the events as objects. The run never decodes or re-encodes an event. Batches come back in
file order and are appended in that order, one at a time as inline (ingest/pipeline.py), so
per-entity order, the exactly-once registry of appended events and the dead letters are the
inline path's. The child parses at most one batch ahead of the resolution it waits for.
"""

from __future__ import annotations

import asyncio
import os
import fcntl
import pickle
import queue
import signal
import threading
import traceback
from collections import Counter
from collections.abc import Iterable
from typing import Any

import msgspec

from ingest.batches import Batch, Prepared, RunState, batched, checked_events
from ingest.records import GameClaim, Identity, Item, Record, Rejected, Resolution, WeekGame
from ingest.resolution import claims_of
from schemas.events import EVENT_ROUTES, encode, stamp_encoded, stamp_value

# below this many source records a run stays inline: a fork costs more than it saves on a small file
WORKER_MIN_RECORDS = 512


def wanted(total_records: int, setting: bool | None) -> bool:
    """Whether a run of `total_records` forks a worker, by `Settings.ingest_worker` (SVC_INGEST_WORKER):
    None by size, False never, True always (where the OS can fork)."""
    if setting is False or not hasattr(os, "fork"):
        return False
    return setting is True or total_records >= WORKER_MIN_RECORDS


def _no_events(_resolution: Resolution) -> list:
    return []


def claims_record(claims: list[GameClaim], weeks: list[WeekGame], identities: list[Identity]) -> Record:
    """A batch's distinct claims as one record to resolve (a resolver reads only its claims)."""
    return Record(0, "", "", _no_events, claims=tuple(claims), week_games=tuple(weeks), identities=tuple(identities))


# A built batch's events travel as MessagePack (half of pickle's cost both ways for lists of
# strings and bytes); the rest of the message, which may hold a rejected record's text with
# bytes that were not UTF-8 (lone surrogates, which MessagePack cannot carry), as pickle.
# The events, as five lists in the same order: each one's ID ("" when the run is to stamp it),
# base topic, key, value and type name (lists, not a (topic, key, value) tuple an event: the run
# builds that tuple once its value is stamped).
_events_out = msgspec.msgpack.Encoder()
_events_in = msgspec.msgpack.Decoder(tuple[list[str], list[str], list[bytes], list[bytes], list[str]])


def _built(batch: Batch, resolution: Resolution, state: RunState) -> bytes:
    """A batch's events inside the bounds, encoded as they are: an event not stamped yet is
    stamped by the run (`ParseWorker._stamped`), one given an ID here, as `build` does."""
    rejected: list[Rejected] = []
    ids: list[str] = []
    topics: list[str] = []
    keys: list[bytes] = []
    values: list[bytes] = []
    kinds: list[str] = []
    for event in checked_events(batch, resolution, rejected):
        if event.event_id:
            stamped, value = stamp_encoded(event)
            ids.append(stamped.event_id)
        else:
            value = encode(event)
            ids.append("")
        # (checked_events let through registered types only)
        kind = type(event)
        topic, key_field = EVENT_ROUTES[kind]
        topics.append(topic)
        keys.append(getattr(event, key_field).encode())
        values.append(value)
        kinds.append(kind.__name__)
    state.records.update(batch.indices)
    events = _events_out.encode((ids, topics, keys, values, kinds))
    return pickle.dumps(("built", events, rejected, len(state.records)), pickle.HIGHEST_PROTOCOL)


def _send(fd: int, payload: bytes) -> None:
    """One message on a pipe, whole: its length, then its bytes (blocking: the child's side)."""
    view = memoryview(len(payload).to_bytes(8, "big") + payload)
    while view:
        view = view[os.write(fd, view):]


def _receive(fd: int) -> bytes:
    """One whole message from a pipe (blocking: the child's side); EOFError when it is closed."""
    def exactly(n: int) -> bytes:
        parts, left = [], n
        while left:
            part = os.read(fd, min(left, 1 << 20))
            if not part:
                raise EOFError("the run closed its end of the pipe")
            parts.append(part)
            left -= len(part)
        return b"".join(parts)

    return exactly(int.from_bytes(exactly(8), "big"))


def _child(items: Iterable[Item], out: int, into: int) -> None:
    """The child's whole life: parse, ask for each batch's resolution, build, hand back."""
    state = RunState()
    waiting: Batch | None = None  # parsed, its claims sent, its resolution not yet read
    writer = _Writer(out)
    try:
        for batch in batched(items):
            writer.send(pickle.dumps(("claims", *claims_of(batch.records)), pickle.HIGHEST_PROTOCOL))
            if waiting is not None:
                writer.send(_built(waiting, pickle.loads(_receive(into)), state))
            waiting = batch
        if waiting is not None:
            writer.send(_built(waiting, pickle.loads(_receive(into)), state))
        writer.send(pickle.dumps(("end",), pickle.HIGHEST_PROTOCOL))
    finally:
        writer.close()  # all of it written (or the run gone) before anything else writes there


class _Writer:
    """The child's messages written by a thread of its own, in order. A built batch is a few MB
    and the pipe holds 1 MiB: written in place, the child waited, batch after batch, until the
    run's event loop was free to read (the run stamps and sends between reads) instead of
    parsing the next batch. The thread holds the GIL only between its writes."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.messages: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.failed: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="ingest-worker-writer", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while (payload := self.messages.get()) is not None:
            try:
                _send(self.fd, payload)
            except BaseException as exc:  # noqa: BLE001 - the run closed the pipe: the child stops
                self.failed = exc
                return

    def send(self, payload: bytes) -> None:
        if self.failed is not None:
            raise self.failed
        self.messages.put(payload)

    def close(self) -> None:
        self.messages.put(None)
        self.thread.join()
        if self.failed is not None:
            raise self.failed


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


# A built batch is ~11 MB (15,000 events of ~700 B). Through a pipe of the default 64 KiB it
# takes ~170 hand-overs between the two processes, each a wait for the scheduler on a loaded
# box; through one of 1 MiB (Linux's limit for anyone, /proc/sys/fs/pipe-max-size) ~11.
_PIPE_SIZE = 1 << 20


def _pipe() -> tuple[int, int]:
    r, w = os.pipe()
    try:
        fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, _PIPE_SIZE)
    except (OSError, AttributeError):  # not Linux, or a lower limit: the default size works
        pass
    return r, w


def _own_signals() -> None:
    """In the child: Ctrl-C just ends it (the run, in the parent, reports), and a signal it gets
    is never written to the parent's event loop (the wakeup fd it inherited is the loop's)."""
    # (a forked child's one thread is its main thread, whichever thread forked it)
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class _Messages(asyncio.Protocol):
    """The run's side of the child's pipe, read by the event loop itself: whole messages into
    a queue (None once the child's end closes). No thread: a reader thread would wait for the
    GIL (up to 5 ms) on every chunk while the run's thread is busy sending.

    A message is read into a buffer of its own, allocated whole once its length is known, and
    queued as it is: a built batch (a few MB) is copied once, from the loop's chunks. Gathered
    in one growing buffer and cut out of it, it was copied three times and more, each copy into
    memory the process had not touched yet (page faults: most of the run's system time)."""

    def __init__(self, messages: asyncio.Queue[bytearray | None]) -> None:
        self.messages = messages
        self.length = bytearray()  # the next message's 8-byte length, as far as it came
        self.message: bytearray | None = None  # the message being read, once its length came
        self.filled = 0  # bytes of it read so far

    def data_received(self, data: bytes) -> None:
        view = memoryview(data)
        while True:
            if self.message is None:
                need = 8 - len(self.length)
                self.length += view[:need]
                view = view[need:]
                if len(self.length) < 8:
                    return
                self.message, self.filled = bytearray(int.from_bytes(self.length, "big")), 0
                self.length.clear()
            message, filled = self.message, self.filled
            part = view[:len(message) - filled]
            message[filled:filled + len(part)] = part
            self.filled = filled = filled + len(part)
            view = view[len(part):]
            if filled < len(message):
                return
            self.messages.put_nowait(message)
            self.message = None

    def eof_received(self) -> bool:
        self.messages.put_nowait(None)
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None:
            self.messages.put_nowait(None)


class ParseWorker:
    """The forked child and the run's side of its pipes: `next()` message in order, `resolved()`.
    Start with `await ParseWorker.start(items)`."""

    def __init__(self, pid: int, messages: asyncio.Queue[bytearray | None], reading: asyncio.BaseTransport,
                 writing: asyncio.WriteTransport) -> None:
        self.pid: int | None = pid
        self._messages, self._reading, self._writing = messages, reading, writing
        self._seen: set[str] = set()  # event IDs handed on in this run (RunState's rule)

    @classmethod
    async def start(cls, items: Iterable[Item]) -> ParseWorker:
        to_child_r, to_child_w = _pipe()
        from_child_r, from_child_w = _pipe()
        pid = os.fork()
        if pid == 0:  # the child
            code = 0
            try:
                os.close(to_child_w)
                os.close(from_child_r)
                _own_signals()
                _child(items, from_child_w, to_child_r)
            except BaseException as exc:  # noqa: BLE001 - reported to the run, which raises it
                code = 1
                try:
                    _send(from_child_w, _portable(exc))
                except BaseException:  # noqa: BLE001 - the run is gone: nothing to tell
                    pass
            finally:
                os._exit(code)
        os.close(to_child_r)
        os.close(from_child_w)
        loop = asyncio.get_running_loop()
        messages: asyncio.Queue[bytearray | None] = asyncio.Queue()
        # (the transports own the two file objects and close them)
        reading, _ = await loop.connect_read_pipe(lambda: _Messages(messages), open(from_child_r, "rb", buffering=0))
        writing, _ = await loop.connect_write_pipe(asyncio.Protocol, open(to_child_w, "wb", buffering=0))
        return cls(pid, messages, reading, writing)

    async def next(self) -> tuple[Any, ...]:
        data = await self._messages.get()
        if data is None:
            raise WorkerDied(f"the ingest worker (pid {self.pid}) exited without finishing: {self._status()}")
        message = pickle.loads(data)
        if message[0] == "error":
            raise message[1]
        if message[0] == "built":
            _, events, rejected, records_read = message
            return ("built", self._stamped(*_events_in.decode(events), rejected, records_read))
        return message

    def _stamped(self, ids: list[str], topics: list[str], keys: list[bytes], values: list[bytes], kinds: list[str],
                 rejected: list[Rejected], records_read: int) -> Prepared:
        """A built batch stamped, without the events this run already had: what `prepare` makes."""
        seen = self._seen
        new_ids: list[str] = []
        new: list[tuple[str, bytes, bytes]] = []
        new_kinds: list[str] = []
        for event_id, topic, key, value, kind in zip(ids, topics, keys, values, kinds):
            if not event_id:
                event_id, value = stamp_value(value)
            if event_id not in seen:
                seen.add(event_id)
                new_ids.append(event_id)
                new.append((topic, key, value))
                new_kinds.append(kind)
        return Prepared(new_ids, new, Counter(new_kinds), rejected, records_read)

    def resolved(self, resolution: Resolution) -> None:
        """Hand the child a batch's resolution (buffered by the loop: never waits on the pipe)."""
        payload = pickle.dumps(resolution, pickle.HIGHEST_PROTOCOL)
        self._writing.write(len(payload).to_bytes(8, "big") + payload)

    def _status(self) -> str:
        if self.pid is None:
            return "reaped"
        pid, status = os.waitpid(self.pid, 0)
        self.pid = None
        return f"exit status {os.waitstatus_to_exitcode(status)}"

    def close(self) -> None:
        """Stop the child if it still runs (a failed or cancelled run), reap it, close the pipes."""
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)  # our own child, not reaped yet: its pid is ours
            except ProcessLookupError:
                pass
            os.waitpid(self.pid, 0)
            self.pid = None
        self._writing.close()
        self._reading.close()
