"""The embedded broker with a kept log: tansu behind a small proxy that writes the log to disk.

`svc up` runs this as its `broker` child (never against an external Kafka). In order:

1. open the copy in `<data-dir>/log/` (`infra.log_copy`); refuse, with what to run, a copy that
   is damaged or of another layout, or a data dir whose stack ran before the log was kept;
2. start tansu (memory storage) on a private port, advertising the public one;
3. restore every kept record batch into it, partition by partition in offset order, so every
   record is back at its offset with its key, headers and timestamp (the epoch, the first
   record of `svc.control`, with them);
4. only then listen on the public port: nobody (producer, projector, API) sees the broker
   before it holds the whole log, on the first start and after a restart alike.

Clients talk to the public port; every request goes to tansu unchanged except delete topics,
fetch (below) and produce: its record batches are assigned the offsets tansu will give them (the keeper is the only way in,
and produces are handled one at a time) and written to the copy's write-ahead log, then
forwarded while the copy is synced (fsync); the acknowledgement reaches the producer only
after both, and after tansu confirmed those offsets. So an acknowledged record is on disk, and
a consumer never reads a record that a crash of our processes could lose: tansu gets it only
once it is written to the file. A refused produce is taken back out of the copy.

Fetch requests (v11, what aiokafka sends) are answered from the copy, up to each partition's
acknowledged end, instead of by tansu, whose fetch cost grows with the log (docs/log.md).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import subprocess
import sys
import time
from collections import deque
from pathlib import Path

from aiokafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from infra import kafka_protocol as kp
from infra.broker import broker_argv
from infra.log_copy import LogCopy, LogCopyError
from infra.parent_death import dies_with_parent
from infra.net import free_port, wait_port

log = logging.getLogger("log_keeper")
EXIT_REFUSED = 78  # the copy cannot be used: restarting will not help
RESPONSE_TIMEOUT = 60.0
RESTORE_CHUNK = 1 << 20  # bytes of records per partition per restore request
RESTORE_REQUEST = 16 << 20
RESTORE_IN_FLIGHT = 2


class Fatal(Exception):
    """The copy and the broker disagree: exit, the supervisor restarts us and we restore."""




# ---- restore ----------------------------------------------------------------------------------


def _chunks(copy: LogCopy, topic: str, partition: int):
    """(base offset, one record batch) covering the partition in order: consecutive stored
    batches are merged into one batch of up to RESTORE_CHUNK bytes (same offsets, keys, headers
    and timestamps), so a log of many small batches comes back as few."""
    group: list[tuple[int, bytes]] = []
    size = 0
    for base, batch in copy.batches(topic, partition):
        if group and size + len(batch) > RESTORE_CHUNK:
            yield _merge(group)
            group, size = [], 0
        group.append((base, batch))
        size += len(batch)
    if group:
        yield _merge(group)


def _merge(group: list[tuple[int, bytes]]) -> tuple[int, bytes, int]:
    first = group[0][0]
    last_base, last = group[-1]
    count = last_base + kp.batch_count(last) - first
    if len(group) == 1:
        return first, group[0][1], count
    builder = DefaultRecordBatchBuilder(2, 0, 0, -1, -1, -1, 1 << 62)
    for base, raw in group:
        batch = DefaultRecordBatch(raw)
        shift = base - first - batch.base_offset
        for record in batch:
            headers = list(record.headers)
            if builder.append(record.offset + shift, record.timestamp, record.key, record.value, headers) is None:
                raise Fatal("a merged record batch refused a record")
    return first, bytes(builder.build()), count


async def restore(copy: LogCopy, client: kp.Client) -> dict[tuple[str, int], int]:
    """Every kept batch into an empty broker; returns the end offset of each partition."""
    damaged = copy.unregistered_topics()
    if damaged:
        raise LogCopyError(f"the log kept in {copy.path} is damaged: records of {', '.join(damaged)} "
                           "but no partition count")
    for topic, partitions in copy.partitions.items():
        await client.create_topic(topic, partitions)
    ends = {tp: 0 for tp in ((t, p) for t, n in copy.partitions.items() for p in range(n))}
    streams = {tp: _chunks(copy, *tp) for tp in ends}
    in_flight: deque = deque()  # the next request is read and built while the broker appends

    async def settle() -> None:
        sent, request, expected = in_flight.popleft()
        response = await client.receive(request, sent, timeout=RESPONSE_TIMEOUT)
        for topic, results in response.topics:
            for partition, error, offset, *_ in results:
                base, count = expected[(topic, partition)]
                if error or offset != base:
                    raise Fatal(f"restoring {topic}[{partition}]: broker put offset {base} at {offset} "
                                f"(error {error})")
                ends[(topic, partition)] = base + count

    while streams:
        parts, expected, size = [], {}, 0
        for tp, stream in list(streams.items()):
            if size >= RESTORE_REQUEST:
                break
            chunk = next(stream, None)
            if chunk is None:
                del streams[tp]
                continue
            base, batch, count = chunk
            parts.append((*tp, batch))
            expected[tp] = (base, count)
            size += len(batch)
        if parts:
            request = kp.produce_request(parts)
            in_flight.append((await client.send(request), request, expected))
        while len(in_flight) >= RESTORE_IN_FLIGHT or (in_flight and not streams):
            await settle()
    return ends


# ---- the proxy --------------------------------------------------------------------------------


class Keeper:
    def __init__(self, copy: LogCopy, upstream: tuple[str, int]) -> None:
        self.copy = copy
        self.upstream = upstream
        self.ends: dict[tuple[str, int], int] = {}
        self.produce_lock = asyncio.Lock()
        self.admin: kp.Client | None = None
        self.failed: asyncio.Future = asyncio.get_running_loop().create_future()
        self.connections: set[asyncio.Task] = set()
        self.unkept: dict[str, int] = {}  # partition counts of topics the copy does not hold yet
        self.appended: asyncio.Future = asyncio.get_running_loop().create_future()

    def fail(self, exc: BaseException) -> None:
        if not self.failed.done():
            self.failed.set_exception(exc)

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self.connections.add(task)
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError as exc:
            self.fail(Fatal(f"broker does not answer: {exc}"))
            writer.close()
            return
        # one slot per request, in request order: a Kafka client matches responses to its
        # requests by their order on the connection, and a fetch answered here can be ready
        # before (or after) the broker's answer to an earlier request
        slots: asyncio.Queue[asyncio.Future] = asyncio.Queue()
        pending: dict[int, asyncio.Future] = {}
        pump = asyncio.create_task(self._pump(up_reader, writer, pending))
        respond = asyncio.create_task(self._respond(writer, slots))
        loop = asyncio.get_running_loop()
        try:
            while True:
                body = await kp.read_frame(reader)
                api_key, version, corr = kp.request_head(body)
                if api_key == kp.FETCH and version in kp.FETCH_VERSIONS:
                    request = kp.decode_fetch(body)
                    if not request.session:
                        slots.put_nowait(asyncio.ensure_future(self._fetch(request, corr)))
                        continue
                if api_key == kp.PRODUCE:
                    slot = loop.create_future()
                    slots.put_nowait(slot)
                    await self._produce(body, version, corr, up_writer, slot, pending)
                elif api_key == kp.DELETE_TOPICS:
                    slot = loop.create_future()
                    slots.put_nowait(slot)
                    await self._delete_topics(body, corr, up_writer, slot, pending)
                else:
                    slot = loop.create_future()
                    pending[corr] = slot
                    slots.put_nowait(slot)
                    up_writer.write(kp.frame(body))
                    await up_writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, kp.ProtocolError) as exc:
            if isinstance(exc, kp.ProtocolError):
                log.warning("closing a connection: %s", exc)
        except Fatal as exc:
            self.fail(exc)
        finally:
            pump.cancel()
            respond.cancel()
            while not slots.empty():  # fetches still waiting for records
                slots.get_nowait().cancel()
            for w in (writer, up_writer):
                w.close()
            self.connections.discard(task)

    async def _respond(self, writer, slots: asyncio.Queue) -> None:
        """Responses to the client in request order, each when it is ready."""
        slot = None
        try:
            while True:
                slot = await slots.get()
                body = await slot
                if body is not None:  # a produce with acks=0 has none
                    writer.write(kp.frame(body))
                    await writer.drain()
        except asyncio.CancelledError:
            if slot is not None:  # the connection ended: a fetch waiting for records stops too
                slot.cancel()
            raise
        except ConnectionError:
            writer.close()
        except Exception:  # a fetch that failed: the client reconnects and asks again
            log.exception("closing a connection")
            writer.close()

    async def _pump(self, up_reader, writer, pending: dict[int, asyncio.Future]) -> None:
        """Broker -> the slot of the request each response answers."""
        try:
            while True:
                body = await kp.read_frame(up_reader)
                fut = pending.pop(kp.correlation_id(body), None)
                if fut is None:
                    raise kp.ProtocolError(f"the broker answered request {kp.correlation_id(body)}, which it was not sent")
                if not fut.done():
                    fut.set_result(body)
        except (asyncio.IncompleteReadError, ConnectionError, kp.ProtocolError) as exc:
            for fut in pending.values():
                if not fut.done():
                    fut.set_exception(ConnectionError(f"broker connection ended: {exc!r}"))
            writer.close()

    # ---- fetch: served from the copy ---------------------------------------------------------

    async def _fetch_partitions(self, topic: str) -> int | None:
        """Partitions of a topic a consumer may fetch: the copy's count, else the broker's (a
        topic created but not yet produced to), remembered until the topic is deleted."""
        count = self.copy.partitions.get(topic) or self.unkept.get(topic)
        if count is None:
            count = await self.admin.partition_count(topic, create=False)  # a fetch creates nothing
            if count is not None:
                self.unkept[topic] = count
        return count

    def _read(self, request: kp.Fetch, counts: dict[str, int | None]):
        """(response topics, bytes of records, whether any partition answers an error)."""
        budget = request.max_bytes
        size, errors, topics = 0, False, []
        for topic, partitions in request.topics:
            count = counts[topic]
            answers = []
            for partition, offset, max_bytes in partitions:
                if count is None or not 0 <= partition < count:
                    answers.append((partition, kp.UNKNOWN_TOPIC_OR_PARTITION, -1, b""))
                    errors = True
                    continue
                end = self.ends.get((topic, partition), 0)
                if not 0 <= offset <= end:
                    answers.append((partition, kp.OFFSET_OUT_OF_RANGE, end, b""))
                    errors = True
                    continue
                batches = []
                if offset < end and budget > 0:
                    batches = self.copy.read(topic, partition, offset, end, min(max_bytes, budget))
                records = b"".join(batches)
                budget -= len(records)
                size += len(records)
                answers.append((partition, 0, end, records))
            topics.append((topic, answers))
        return topics, size, errors

    async def _fetch(self, request: kp.Fetch, corr: int) -> bytes:
        """Records up to the acknowledged end of each partition (a produce the broker refused,
        taken back out of the copy, is never seen); below min_bytes, wait for a produce to one of
        the partitions or for max_wait."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + request.max_wait_ms / 1000
        counts = {topic: await self._fetch_partitions(topic) for topic, _ in request.topics}
        tps = [(topic, p) for topic, partitions in request.topics for p, _, _ in partitions]
        while True:
            seen = [self.ends.get(tp) for tp in tps]
            topics, size, errors = self._read(request, counts)
            remaining = deadline - loop.time()
            if size >= request.min_bytes or errors or remaining <= 0:
                return kp.fetch_response(corr, request.version, topics)
            while [self.ends.get(tp) for tp in tps] == seen and remaining > 0:
                await asyncio.wait({self.appended}, timeout=remaining)
                remaining = deadline - loop.time()

    def _appended(self) -> None:
        """Wake fetches waiting for records: the acknowledged ends moved."""
        self.appended.set_result(None)
        self.appended = asyncio.get_running_loop().create_future()

    async def _partition_count(self, topic: str) -> int | None:
        count = self.copy.partitions.get(topic)
        if count is None:
            count = await self.admin.partition_count(topic)
            if count is not None:
                await asyncio.to_thread(self.copy.register, topic, count)
        return count

    async def _exchange(self, body: bytes, corr: int, up_writer, pending) -> bytes:
        """Forward a request and wait for its response, which the pump hands here."""
        fut = asyncio.get_running_loop().create_future()
        pending[corr] = fut
        up_writer.write(kp.frame(body))
        await up_writer.drain()
        try:
            return await asyncio.wait_for(fut, RESPONSE_TIMEOUT)
        except (asyncio.TimeoutError, ConnectionError) as exc:
            raise Fatal(f"broker gave no answer: {exc!r}") from exc

    async def _delete_topics(self, body: bytes, corr: int, up_writer, slot, pending) -> None:
        """A deleted topic leaves the copy too (else a restart would bring it back)."""
        request = kp.decode_delete_topics(body)
        async with self.produce_lock:
            response = await self._exchange(body, corr, up_writer, pending)
            for topic, error in kp.decode_delete_topics_response(request, response).items():
                if error == 0:
                    self.unkept.pop(topic, None)
                if error == 0 and topic in self.copy.partitions:
                    self.ends = {tp: end for tp, end in self.ends.items() if tp[0] != topic}
                    await asyncio.to_thread(self.copy.drop, topic)
        slot.set_result(response)

    async def _produce(self, body: bytes, version: int, corr: int, up_writer, slot, pending) -> None:
        request = kp.decode_produce(body)
        async with self.produce_lock:
            entries: list[tuple[str, int, int, bytes]] = []
            firsts: dict[tuple[str, int], int] = {}
            ends = dict(self.ends)
            for topic, partition, records in request.parts:
                count = await self._partition_count(topic)
                if count is None or not 0 <= partition < count:
                    continue  # the broker refuses it; if it did not, the check below stops us
                tp = (topic, partition)
                base = ends.get(tp, 0)
                firsts[tp] = base
                for start, end, n in kp.batch_spans(records):
                    entries.append((topic, partition, base, records[start:end]))
                    base += n
                ends[tp] = base
            # written before the broker can show it to anyone, synced before it is acknowledged;
            # the sync (an fsync) runs while the broker appends. The write itself (into RocksDB's
            # memtable and write-ahead log file, no fsync) is a few ms for MBs: done in place,
            # a thread's hand-over cost more than it saved
            if entries:
                self.copy.append(entries, False)
            synced = asyncio.ensure_future(asyncio.to_thread(self.copy.sync)) if entries else None
            if request.acks == 0:  # no answer will come (nothing here sends acks=0)
                up_writer.write(kp.frame(body))
                await up_writer.drain()
                if synced is not None:
                    await synced
                self.ends = ends
                self._appended()
                slot.set_result(None)
                return
            try:
                response = await self._exchange(body, corr, up_writer, pending)
            finally:
                if synced is not None:
                    await synced
            results = kp.decode_produce_response(version, response)
            refused = []
            for tp, (error, offset) in results.items():
                if tp not in firsts:
                    if not error:
                        raise Fatal(f"broker took records for {tp[0]}[{tp[1]}], which is not kept")
                    continue
                if error:
                    refused += [(t, p, b) for t, p, b, _ in entries if (t, p) == tp]
                    ends[tp] = self.ends.get(tp, 0)
                elif offset != firsts[tp]:
                    raise Fatal(f"broker put {tp[0]}[{tp[1]}] offset {firsts[tp]} at {offset}")
            if refused:
                await asyncio.to_thread(self.copy.remove, refused)
            self.ends = ends
            self._appended()
        slot.set_result(response)


async def keep(data_dir: Path, host: str, port: int, broker_log: Path | None) -> int:
    copy = LogCopy.open(data_dir)
    private = free_port(host)
    out = open(broker_log, "ab") if broker_log else subprocess.DEVNULL
    tansu = subprocess.Popen(broker_argv(private, host, advertised_port=port), stdout=out,
                             stderr=subprocess.STDOUT, preexec_fn=dies_with_parent(signal.SIGKILL))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    server = None
    try:
        await asyncio.to_thread(wait_port, host, private, 20, lambda: tansu.poll() is None)
        client = await kp.Client.connect(host, private)
        started = time.monotonic()
        ends = await restore(copy, client)
        records = sum(ends.values())
        log.info("restored %d records of %d topics in %.2fs from %s", records, len(copy.partitions),
                 time.monotonic() - started, copy.path)
        keeper = Keeper(copy, (host, private))
        keeper.ends = ends
        keeper.admin = client
        server = await asyncio.start_server(keeper.serve, host, port, reuse_address=True)
        log.info("listening on %s:%d (broker on %d)", host, port, private)
        broker_exit = asyncio.create_task(asyncio.to_thread(tansu.wait))
        stopping = asyncio.create_task(stop.wait())
        done, _ = await asyncio.wait({broker_exit, stopping, keeper.failed}, return_when=asyncio.FIRST_COMPLETED)
        if keeper.failed in done:
            log.error("stopping: %s", keeper.failed.exception())
            return 1
        if broker_exit in done:
            log.error("the broker exited (code %s); stopping so the log is restored into a new one", tansu.returncode)
            return 1
        return 0
    finally:
        if server is not None:
            server.close()
        if tansu.poll() is None:
            # SIGKILL, not SIGTERM: tansu keeps nothing (memory storage; the copy is the log), and
            # asked politely it waits 5 s for open connections (ours among them) to drain, which
            # every stop of `svc up` paid
            tansu.kill()
            await asyncio.to_thread(tansu.wait)
        copy.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infra.log_keeper", description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--broker-log", type=Path, default=None)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return asyncio.run(keep(args.data_dir, args.host, args.port, args.broker_log))
    except LogCopyError as exc:
        print(f"refused: {exc}", file=sys.stderr, flush=True)
        return EXIT_REFUSED


if __name__ == "__main__":
    sys.exit(main())
