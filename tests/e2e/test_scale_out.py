"""Scale-out on the embedded stack: two projectors and two API processes on one broker and one
Postgres, feed topics of 4 partitions, the sandbox day flowing; one projector is SIGKILLed and
the other takes over its partitions.

Checked: every Wire topic's seqs on `test.wire.deltas` run 1, 2, 3, ... with no gap (a repeat
only as an exact duplicate); a Wire stream on either API process gets every seq from its
snapshot on, in order, up to the topic's last; both API processes keep serving; `svc
projections verify` prints `identical`.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import httpx
import pytest

from infra.net import free_port, wait_port
from schemas.datasets import DATASETS, FEED_TOPICS
from tests.e2e.stack import SVC, Stack, alive

pytestmark = pytest.mark.e2e
STREAM_TOPICS = 2  # per API process; 5 open streams per address at most


class Stream(threading.Thread):
    """One SSE stream of one Wire topic: the seq of every event, and each delta's data."""

    def __init__(self, url: str, ticket: str) -> None:
        super().__init__(daemon=True)
        self.url, self.ticket = url, ticket
        self.events: list[tuple[str, int, str]] = []  # (event, seq, data)
        self.error: BaseException | None = None
        self.stop = threading.Event()

    def run(self) -> None:
        try:
            with httpx.stream("GET", self.url, params={"ticket": self.ticket}, timeout=httpx.Timeout(10, read=60)) as r:
                assert r.status_code == 200, r.read()
                event: dict[str, str] = {}
                for line in r.iter_lines():
                    if self.stop.is_set():
                        return
                    if line == "":
                        if "id" in event:
                            self.events.append((event.get("event", "message"), int(event["id"]), event.get("data", "")))
                        event = {}
                    elif not line.startswith(":"):
                        name, _, value = line.partition(":")
                        event[name] = value[1:] if value.startswith(" ") else value
        except BaseException as exc:  # reported by the test
            if not self.stop.is_set():
                self.error = exc

    def seqs(self) -> list[int]:
        return [seq for _, seq, _ in self.events]


def open_stream(api: str, key: str, topic: str) -> Stream:
    r = httpx.post(f"{api}/v1/wire/tickets", json={"transport": "sse", "topics": [topic], "mode": "test"},
                   headers={"Authorization": f"Bearer {key}"}, timeout=10)
    assert r.status_code == 201, r.text
    body = r.json()
    url = body["url"].replace(body["url"].split("/v1/")[0], api)  # the API process it was minted on
    stream = Stream(url, body["ticket"])
    stream.start()
    return stream


def wire_delta_seqs(stack: Stack) -> dict[str, list[tuple[int, bytes]]]:
    """Per Wire topic, (seq, value) of each record of test.wire.deltas in log order."""
    from aiokafka import AIOKafkaConsumer

    from infra.aiokafka_adapter import partitions_of
    from infra.settings import load_settings

    settings = load_settings(data_dir=stack.data_dir, env={"SVC_DATA_DIR": str(stack.data_dir)})

    async def read() -> dict[str, list[tuple[int, bytes]]]:
        consumer = AIOKafkaConsumer(bootstrap_servers=settings.kafka_bootstrap, enable_auto_commit=False,
                                    auto_offset_reset="earliest", fetch_max_wait_ms=10)
        await consumer.start()
        try:
            tps = await partitions_of(consumer, ["test.wire.deltas"])
            consumer.assign(tps)
            out: dict[str, list[tuple[int, bytes]]] = {}
            idle = 0
            while idle < 20:
                batch = await consumer.getmany(timeout_ms=100)
                idle = 0 if batch else idle + 1
                for records in batch.values():
                    for r in records:
                        envelope = json.loads(r.value)
                        out.setdefault(envelope["topic"], []).append((envelope["seq"], r.value))
            return out
        finally:
            await consumer.stop()

    return asyncio.run(read())


def held(log_path) -> list[int]:
    """The partition counts faust assigned to a projector, oldest first."""
    try:
        text = log_path.read_text(errors="replace")
    except FileNotFoundError:
        return []
    return [int(n) for n in re.findall(r"faust assigned (\d+) partitions", text) if int(n) > 0]


def kept_games(data_dir) -> int:
    """Records of test.feed.games in the kept log."""
    from infra.log_copy import LogCopy

    copy = LogCopy.open(data_dir, read_only=True)
    try:
        return copy.records_per_topic().get("test.feed.games", 0)
    finally:
        copy.close()


def start(argv: list[str], env: dict, log_path) -> subprocess.Popen:
    return subprocess.Popen(argv, env=env, stdout=open(log_path, "wb"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def test_two_projectors_two_apis_one_broker_a_projector_killed(tmp_path):
    data_dir = tmp_path / "svc"
    stack = Stack(data_dir, SVC_TOPIC_PARTITIONS="4", SVC_API_WORKERS="1")
    extra: list[subprocess.Popen] = []
    streams: list[Stream] = []
    try:
        stack.wait_health()
        env = {**stack.env, "SVC_LOG_JSON": "true"}
        # the second projector and the second API, beside the supervisor's; the projector with a
        # state directory of its own (as on its own machine), told where the broker and Postgres are
        stack_record = json.loads((data_dir / "stack.json").read_text())
        projector_env = {**env, "SVC_DATA_DIR": str(tmp_path / "projector2"),
                         "KAFKA_BOOTSTRAP": stack_record["kafka_bootstrap"],
                         "DATABASE_URL": stack_record["database_url"]}
        projector2 = start([*SVC, "projector", "run"], projector_env, tmp_path / "projector2.log")
        port2 = free_port()
        api2_proc = start([sys.executable, "-m", "granian", "--interface", "asgi", "--host", "127.0.0.1", "--port",
                           str(port2), "--workers", "1", "--no-access-log", "api.server:app"], env, tmp_path / "api2.log")
        extra += [projector2, api2_proc]
        wait_port("127.0.0.1", port2, 60, lambda: api2_proc.poll() is None)
        apis = [stack.url, f"http://127.0.0.1:{port2}"]

        done = stack.svc("sample", "load", "--no-live", timeout=300)  # the sandbox day's pre-game into test
        assert done.returncode == 0, done.stdout + done.stderr
        lag = stack.svc("lag", "--wait", "120", timeout=150)
        assert lag.returncode == 0, lag.stdout + lag.stderr
        code, created = stack.svc_json("keys", "create", "--account", "scale", "--plan", "scale",
                                       "--scopes", "read:odds,wire:connect", "--mode", "test")
        assert code == 0, created
        key = created["key"]
        # test mode's default slate day: the sandbox day's, on the sandbox clock
        slate = httpx.get(f"{apis[0]}/v1/slate", params={"tz": "America/New_York"},
                          headers={"Authorization": f"Bearer {key}"}, timeout=30)
        assert slate.status_code == 200, slate.text
        first = min(g["kickoff_at"] for g in slate.json()["data"])
        first_games = [g for g in slate.json()["data"] if g["kickoff_at"] == first]  # the 1 pm games
        topics = [f"market:{m['id']}" for g in first_games[:STREAM_TOPICS] for m in g["markets"]
                  if m["type"] == "h2h"][:STREAM_TOPICS]
        assert len(topics) == STREAM_TOPICS
        streams = [open_stream(api, key, topic) for api in apis for topic in topics]

        # both projectors hold feed partitions of the group: the second joined without either
        # exiting (each may meet the other's commits while the second catches up, and reloads)
        deadline = time.monotonic() + 90
        while not (held(tmp_path / "projector2.log") and held(data_dir / "logs" / "projector.log")):
            assert time.monotonic() < deadline and projector2.poll() is None, \
                (tmp_path / "projector2.log").read_text()[-3000:]
            time.sleep(0.2)
        shared = held(data_dir / "logs" / "projector.log")[-1]
        first_projector = stack.pid("projector")
        assert first_projector is not None and alive(first_projector)

        # the day's games in play (10.5 hours at 1800x): a steady flow onto the 4-partition feed
        # topics, the second projector killed in the middle of it
        pregame = kept_games(data_dir)
        play = start([*SVC, "sandbox", "play", "--speed", "1800"], env, tmp_path / "sandbox.log")
        extra.append(play)
        while kept_games(data_dir) == pregame:  # in play once the log grows
            assert play.poll() is None, (tmp_path / "sandbox.log").read_text()[-2000:]
            time.sleep(0.1)
        time.sleep(2)
        assert play.poll() is None, "the sandbox day ended before the projector was killed"
        assert projector2.poll() is None, (tmp_path / "projector2.log").read_text()[-3000:]
        assert held(data_dir / "logs" / "projector.log")[-1] == shared  # no rebalance meanwhile
        projector2.send_signal(signal.SIGKILL)
        projector2.wait(10)
        # the survivor is given the killed one's partitions (once its session expired): every
        # partition of the group, while the day still flows
        every = len(DATASETS) * len(FEED_TOPICS) * 4
        deadline = time.monotonic() + 60
        while held(data_dir / "logs" / "projector.log")[-1] != every:
            assert time.monotonic() < deadline, "the other projector did not take over"
            time.sleep(0.2)
        assert shared < every
        took_over_in_flow = play.poll() is None
        assert play.wait(240) == 0, (tmp_path / "sandbox.log").read_text()[-2000:]
        assert took_over_in_flow, "the day ended before the other projector took over"
        lag = stack.svc("lag", "--wait", "120", timeout=150)
        assert lag.returncode == 0, lag.stdout + lag.stderr

        # every topic's seqs gapless on the log; a repeat only as an exact duplicate
        by_topic = wire_delta_seqs(stack)
        assert by_topic and all(t in by_topic for t in topics)
        for topic, records in by_topic.items():
            first: dict[int, bytes] = {}
            for seq, value in records:
                assert first.setdefault(seq, value) == value, f"{topic} seq {seq} sent twice, differently"
            assert sorted(first) == list(range(1, len(first) + 1)), f"{topic}: seqs with a gap"
            ordered = [seq for seq, _ in records]
            assert all(b >= a or b in first for a, b in zip(ordered, ordered[1:]))

        # a stream on either API process: every seq after its snapshot, up to the topic's last
        deadline = time.monotonic() + 30
        for stream in streams:
            topic = topics[streams.index(stream) % len(topics)]
            last = max(seq for seq, _ in by_topic[topic])
            while (not stream.seqs() or stream.seqs()[-1] < last) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert stream.error is None, stream.error
            seqs = stream.seqs()
            assert stream.events[0][0] == "snapshot"
            distinct = sorted(set(seqs))
            assert distinct == list(range(seqs[0], last + 1)), f"{topic}: the stream missed seqs"
            assert seqs == sorted(seqs)

        # a clean takeover: neither projector failed or exited before the kill, the supervisor's
        # was never restarted
        assert stack.pid("projector") == first_projector
        for log_path in (tmp_path / "projector2.log", data_dir / "logs" / "projector.log"):
            text = log_path.read_text(errors="replace")
            for sign in ("Traceback", "KeyError", "exiting for a clean restart", "exiting for the supervisor"):
                assert sign not in text, f"{log_path.name}: {sign}\n{text[-3000:]}"
        for api in apis:  # both API processes still serve
            assert httpx.get(f"{api}/health", timeout=10).json()["ok"] is True
        verify = stack.svc("projections", "verify", timeout=300)
        assert verify.returncode == 0 and verify.stdout.strip() == "identical", verify.stdout + verify.stderr
    finally:
        for stream in streams:
            stream.stop.set()
        for proc in extra:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
        assert stack.stop() == 0, stack.log_text()
        assert not any(alive(p.pid) for p in extra)
