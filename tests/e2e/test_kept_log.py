"""The embedded stack keeps its log: a stop and a start of `svc up` lose nothing.

Ingest on a fresh stack, note what it serves, its export and the log's records per topic;
stop; start on the same data dir: the same log (same records at the same offsets, same epoch),
no rebuild, the same read models, the same export byte for byte.
"""

from __future__ import annotations

import os
import signal
import time

import pytest

from ingest.samples import SAMPLES
from tests.e2e.stack import Stack, processes_of

pytestmark = pytest.mark.e2e
GAMES = SAMPLES / "nflverse" / "games_2023_2025.csv"
ODDS = SAMPLES / "oddsapi" / "nfl_2023_draftkings_spreads_american.json"


def ingest(stack: Stack, adapter: str, path) -> dict:
    code, summary = stack.svc_json("ingest", adapter, str(path))
    assert code == 0, summary
    return summary


def caught_up(stack: Stack) -> None:
    done = stack.svc("lag", "--wait", "60", timeout=90)
    assert done.returncode == 0, done.stdout + done.stderr


def observe(stack: Stack, export_path) -> dict:
    """What a user sees: read models over HTTP, the export, the kept log's counts."""
    import httpx

    games = httpx.get(f"{stack.url}/v1/games", params={"competition": "nfl", "season": "2023", "week": 1}, timeout=30).json()
    done = stack.svc("export", str(export_path))
    assert done.returncode == 0, done.stdout + done.stderr
    code, log = stack.svc_json("log", "show")
    assert code == 0, log
    for game in games["data"]:
        game.pop("request_id", None)  # per response
    return {"games": games["data"], "export": export_path.read_bytes(), "log": log["records"]}


def projector_log(stack: Stack) -> str:
    return (stack.data_dir / "logs" / "projector.log").read_text(errors="replace")


def test_stop_and_start_keeps_the_log_and_the_read_models(tmp_path):
    data_dir = tmp_path / "svc"
    stack = Stack(data_dir)
    try:
        stack.wait_health()
        stack.wait_content()  # it appends to feed.reference: counted only once it is done
        games = ingest(stack, "nflverse-games", GAMES)
        odds = ingest(stack, "odds-api", ODDS)
        assert games["accepted"] > 4000 and odds["accepted"] > 0
        caught_up(stack)
        before = observe(stack, tmp_path / "before.jsonl")
    finally:
        assert stack.stop() == 0, stack.log_text()
    assert processes_of(data_dir) == []
    assert len(before["games"]) == 16 and before["export"].count(b"\n") >= games["accepted"] + odds["accepted"]
    # every topic the stack wrote is kept: feeds, control (the epoch), the Wire's deltas
    assert {"feed.games", "feed.teams", "svc.control", "wire.deltas"} <= set(before["log"])
    assert before["log"]["wire.deltas"] > 0
    rebuilds_before = projector_log(stack).count("rebuilding from offset 0")

    stack = Stack(data_dir)
    try:
        stack.wait_health()
        caught_up(stack)
        after = observe(stack, tmp_path / "after.jsonl")
        assert after["log"] == before["log"]
        assert after["games"] == before["games"]
        assert after["export"] == before["export"]
        code, report = stack.svc_json("doctor")  # where the log is kept, records per topic
        assert report["log"]["ok"] is True and report["log"]["address"] == str(data_dir.resolve() / "log")
        assert report["log"]["records"] == after["log"]
        verify = stack.svc("projections", "verify", timeout=300)
        assert verify.returncode == 0 and verify.stdout.strip() == "identical", verify.stdout + verify.stderr
        # the same log epoch: the projector resumed (no rebuild) and ingest knows what it appended
        assert projector_log(stack).count("rebuilding from offset 0") == rebuilds_before
        again = ingest(stack, "nflverse-games", GAMES)
        assert again["accepted"] == 0 and again["duplicate"] == games["accepted"] + games["duplicate"]
    finally:
        assert stack.stop() == 0, stack.log_text()

    # the newest batch of a feed partition lost (a copy truncated at a write boundary, which
    # RocksDB cannot tell from a torn last write): the read models hold more than the log
    from rocksdict import Options, Rdict

    db = Rdict(str(data_dir / "log"), Options(raw_mode=True))
    prefix = b"bfeed.games\x00" + (0).to_bytes(4, "big")
    newest = [k for k in db.keys(from_key=prefix) if k.startswith(prefix)][-1]
    db.delete(newest)
    db.close()
    text = up_refuses(data_dir)
    assert f"the log kept in {data_dir.resolve() / 'log'} lost records: feed.games[0] ends at offset" in text
    assert "svc log reset" in text


def kept_feed_counts(stack: Stack) -> dict[str, int]:
    code, log = stack.svc_json("log", "show")
    assert code == 0, log
    return {topic: n for topic, n in log["records"].items() if topic.startswith("feed.") and topic != "feed.deadletter"}


def kill_everything(stack: Stack) -> None:
    """SIGKILL every process of the stack at once: no child gets to stop in order."""
    pids = set(processes_of(stack.data_dir)) | {stack.proc.pid}
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    stack.proc.wait(30)
    stack.log.close()
    deadline = time.monotonic() + 15
    while processes_of(stack.data_dir) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_of(stack.data_dir) == []


def test_acknowledged_events_survive_sigkill_of_the_broker_and_of_the_whole_stack(tmp_path):
    data_dir = tmp_path / "svc"
    stack = Stack(data_dir)
    try:
        stack.wait_health()
        # the content load appends to feed.reference: a CI run counted the log before it was
        # done and found 371 more records after the broker's restart
        stack.wait_content()
        games = ingest(stack, "nflverse-games", GAMES)
        kept = kept_feed_counts(stack)
        # the broker child alone: the supervisor restarts it, it restores before anyone connects
        broker = stack.pid("broker")
        os.kill(broker, signal.SIGKILL)
        stack.wait_pid_change("broker", broker)
        stack.wait_health()
        assert kept_feed_counts(stack) == kept
        odds = ingest(stack, "odds-api", ODDS)  # producers reconnect to the restored broker
        assert odds["accepted"] > 0
        kept = kept_feed_counts(stack)
    except BaseException:
        stack.stop()
        raise
    kill_everything(stack)  # the moment after the ingest reported

    stack = Stack(data_dir)
    try:
        stack.wait_health()
        caught_up(stack)
        assert kept_feed_counts(stack) == kept
        done = stack.svc("export", str(tmp_path / "after.jsonl"))
        assert done.returncode == 0, done.stdout + done.stderr
        exported = (tmp_path / "after.jsonl").read_bytes().count(b"\n")
        assert exported == sum(kept.values())
        # what was reported accepted is in the log once: ingesting again appends nothing
        for adapter, path, first in (("nflverse-games", GAMES, games), ("odds-api", ODDS, odds)):
            again = ingest(stack, adapter, path)
            assert again["accepted"] == 0 and again["duplicate"] == first["events"], (adapter, again)
        assert kept_feed_counts(stack) == kept
        verify = stack.svc("projections", "verify", timeout=300)
        assert verify.returncode == 0 and verify.stdout.strip() == "identical", verify.stdout + verify.stderr
    finally:
        assert stack.stop() == 0, stack.log_text()


def up_refuses(data_dir, timeout: float = 120) -> str:
    stack = Stack(data_dir)
    try:
        code = stack.proc.wait(timeout)
    finally:
        stack.stop()
    assert code != 0
    assert processes_of(data_dir) == []
    return (data_dir.parent / f"{data_dir.name}-up.log").read_text(errors="replace")


def test_up_refuses_a_data_dir_from_before_the_kept_log_and_a_damaged_copy(tmp_path):
    older = tmp_path / "older"
    older.mkdir()
    (older / "stack.json").write_text('{"kafka_bootstrap": "127.0.0.1:1", "embedded": {"broker": true}}')
    text = up_refuses(older)
    assert "ran before its log was kept on disk (older layout" in text and f"svc log reset --data-dir {older}" in text
    assert not (older / "log").exists() and not (older / "pg").exists()  # nothing started, nothing made

    from tests.integration.test_log_keeper import TOPIC, kept

    damaged = tmp_path / "damaged"
    kept(damaged)
    from rocksdict import Options, Rdict

    db = Rdict(str(damaged / "log"), Options(raw_mode=True))
    db.delete([k for k in db.keys() if k.startswith(b"b")][3])
    db.close()
    text = up_refuses(damaged)
    assert f"broker: the log kept in {damaged / 'log'} is damaged: {TOPIC}[0] jumps from offset 12 to 16" in text
    assert f"svc log reset --data-dir {damaged}" in text
