"""A run's worker process (ingest/worker.py) hands back exactly the batches the inline path
builds, and the Odds API market cache (`_market_lines`) changes no event and no dead letter.

The files: the bench's season generator, small, with hostile markets mixed in (placeholder
prices, equal prices written differently, unknown outcomes, bad points and times, unsupported
and lay markets, duplicated names, alternate lines), so that cached and uncached texts, good
and rejected, alternate within one game."""

from __future__ import annotations

import asyncio
import os
import random
from datetime import datetime, timezone
from pathlib import Path

import msgspec
import pytest

from ingest import odds_api, worker
from ingest.batches import RunState, batched, collect, prepare
from ingest.resolution import MemoryResolver
from schemas.events import encode
from tests.perf.bench_ingest import odds_response

TS = datetime(2031, 5, 6, 7, 8, 9, tzinfo=timezone.utc)


def hostile_odds(path: Path, games: int = 40, books: int = 8, seed: int = 3) -> Path:
    rng = random.Random(seed)
    events = msgspec.json.decode(odds_response(games=games, books=books, seed=seed))
    for ev in events:
        for b in ev["bookmakers"]:
            for m in b["markets"]:
                r, (first, second) = rng.random(), m["outcomes"][:2]
                if r < 0.05:
                    first["price"] = second["price"] = -5000
                elif r < 0.12:
                    first["price"] = float(first["price"])  # -110.0: equal to -110, kept as written
                elif r < 0.15:
                    m["outcomes"].reverse()
                elif r < 0.18:
                    first["name"] = "Nobody FC"
                elif r < 0.21:
                    m["outcomes"].pop()
                elif r < 0.24 and m["key"] == "totals":
                    first["point"] = second["point"] = -3
                elif r < 0.27:
                    m["last_update"] = "1700-01-01T00:00:00Z"
                elif r < 0.29:
                    m["key"] = "foo"
                elif r < 0.32 and m["key"] == "h2h":
                    m["key"] = "h2h_lay"
                elif r < 0.35:
                    second["name"] = first["name"]
                elif r < 0.38:
                    m["last_update"] = "2030-09-02T12:00:00Z"
                elif r < 0.41 and m["key"] == "spreads":
                    m["key"] = "alternate_spreads"
                    m["outcomes"] += [dict(o, point=o["point"] * 2) for o in m["outcomes"]]
                elif r < 0.43:
                    first["price"] = "x"
        if rng.random() < 0.1:
            ev["bookmakers"][0]["title"] = "Bad\u202eTitle"
    path.write_bytes(msgspec.json.encode(events))
    return path


def _outcome(path: Path) -> tuple[list[bytes], list[tuple]]:
    c = collect(odds_api.parse(path, TS).items, MemoryResolver())
    return [encode(e) for e in c.events], [(r.index, r.location, r.raw, r.reason) for r in c.rejected]


class _Never(dict):
    """A cache that never holds anything: every market text read and checked afresh."""

    def get(self, key, default=None):
        return default

    def __setitem__(self, key, value):
        pass


def test_the_market_cache_changes_no_event_and_no_dead_letter(tmp_path, monkeypatch):
    path = hostile_odds(tmp_path / "odds.json")
    odds_api._LINES.clear()
    odds_api._BOOK_TITLES.clear()
    cached = _outcome(path)
    again = _outcome(path)  # every text already cached
    monkeypatch.setattr(odds_api, "_LINES", _Never())
    monkeypatch.setattr(odds_api, "_BOOK_TITLES", _Never())  # every book's key and title checked afresh too
    plain = _outcome(path)
    assert len(plain[0]) > 500 and len(plain[1]) > 100  # both kinds, plenty
    assert cached == again == plain
    # equal prices written differently stay as written
    assert any(b'"price":"-110.0"' in v for v in plain[0]) and any(b'"price":"-110"' in v for v in plain[0])


def test_the_market_cache_stays_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(odds_api, "_LINES_MAX", 50)
    odds_api._LINES.clear()
    odds_api._CONTEXTS.clear()
    path = hostile_odds(tmp_path / "odds.json", games=120)
    before = _outcome(path)
    assert 0 < len(odds_api._LINES) <= 50 and 0 < len(odds_api._CONTEXTS) <= 50
    # emptied midway (120 games' teams over 50 numbers): the same events and dead letters
    # as a cache that never holds anything
    monkeypatch.setattr(odds_api, "_LINES", _Never())
    assert _outcome(path) == before


def _inline(path: Path) -> list:
    resolver, state = MemoryResolver(), RunState()
    return [prepare(b, resolver.resolve_now(b.records), state) for b in batched(odds_api.parse(path, TS).items)]


async def _through_worker(items, children: list | None = None) -> list:
    resolver, out = MemoryResolver(), []
    child = await worker.ParseWorker.start(items)
    if children is not None:
        children.append((child, child.pid))
    try:
        while (message := await child.next())[0] != "end":
            if message[0] == "claims":
                child.resolved(await resolver.resolve([worker.claims_record(*message[1:])]))
            else:
                out.append(message[1])
    finally:
        child.close()
    return out


def _shape(prepared: list) -> list:
    return [(p.event_ids, p.records, dict(p.types), [(r.index, r.location, r.raw, r.reason) for r in p.rejected],
             p.records_read) for p in prepared]


def test_the_worker_hands_back_the_batches_the_inline_path_builds(tmp_path):
    path = hostile_odds(tmp_path / "odds.json", games=700, books=2)  # the smaller first batches, two full, a part
    inline = _inline(path)
    assert len(inline) == 5 and sum(len(p.rejected) for p in inline) > 50
    assert _shape(asyncio.run(_through_worker(odds_api.parse(path, TS).items))) == _shape(inline)


def _failing_items(path: Path):
    for n, item in enumerate(odds_api.parse(path, TS).items):
        if n == 300:
            raise OSError(5, "the file went away")
        yield item


def test_a_failure_in_the_worker_is_raised_by_the_run_and_the_worker_is_reaped(tmp_path):
    path = hostile_odds(tmp_path / "odds.json", games=400, books=1)
    children: list = []
    with pytest.raises(OSError, match="the file went away"):
        asyncio.run(_through_worker(_failing_items(path), children))
    (child, pid), = children
    assert child.pid is None and pid > 0  # reaped by close()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # not a child of this process any more


def test_which_runs_use_a_worker():
    assert not worker.wanted(worker.WORKER_MIN_RECORDS - 1, None) and worker.wanted(worker.WORKER_MIN_RECORDS, None)
    assert not worker.wanted(10**6, False)
    assert worker.wanted(1, True)


def test_the_worker_setting_is_one_typed_setting(monkeypatch):
    from infra.settings import load_settings

    assert load_settings(env={}, use_stack=False).ingest_worker is None
    assert load_settings(env={"SVC_INGEST_WORKER": "0"}, use_stack=False).ingest_worker is False
    assert load_settings(env={"SVC_INGEST_WORKER": "1"}, use_stack=False).ingest_worker is True
    monkeypatch.setenv("SVC_INGEST_WORKER", "1")
    assert load_settings(use_stack=False).ingest_worker is True  # the process environment, through Settings
    assert not worker.wanted(10**6, False)  # and only through Settings: nothing reads it behind them
    with pytest.raises(msgspec.ValidationError, match="ingest_worker"):  # not a silent "by size"
        load_settings(env={"SVC_INGEST_WORKER": "sometimes"}, use_stack=False)


def test_a_run_on_an_event_loop_outside_the_main_thread_can_fork_its_worker(tmp_path):
    # (the child sets its signals: allowed, as a forked child's one thread is its main thread)
    import threading

    path = hostile_odds(tmp_path / "odds.json", games=300, books=1)
    out: list = []
    thread = threading.Thread(target=lambda: out.append(asyncio.run(_through_worker(odds_api.parse(path, TS).items))))
    thread.start()
    thread.join(timeout=120)
    assert len(out) == 1 and _shape(out[0]) == _shape(_inline(path))


def test_a_book_refused_once_is_refused_again(tmp_path, monkeypatch):
    # the book check keeps only keys and titles that passed: a bad one is refused on every event
    events = msgspec.json.decode(odds_response(games=3, books=2))
    for ev in events:
        ev["bookmakers"][0]["title"] = "T" * 300
        ev["bookmakers"][1]["key"] = "bad\u0000key"
    path = tmp_path / "odds.json"
    path.write_bytes(msgspec.json.encode(events))
    odds_api._BOOK_TITLES.clear()
    cached = _outcome(path)
    monkeypatch.setattr(odds_api, "_BOOK_TITLES", _Never())
    assert _outcome(path) == cached
    reasons = [r[3] for r in cached[1]]
    assert len(reasons) == 6 and sum("bookmaker title is 300 characters" in r for r in reasons) == 3
    assert sum("bookmaker key has a character U+0000" in r for r in reasons) == 3


class _CountingResolver(MemoryResolver):
    def __init__(self) -> None:
        super().__init__()
        self.resolved = 0

    async def resolve(self, records):
        self.resolved += 1
        return await super().resolve(records)


def test_a_run_resolves_the_workers_claims_while_it_holds_a_batch(tmp_path):
    # The worker builds a batch only once its claims are resolved. The run's side reads them in
    # a task of its own, so while the run is busy with one batch (awaiting its acknowledgements)
    # the worker's next claims are resolved and it goes on building, up to BUILT_AHEAD built
    # batches waiting; before, the worker waited until the run came back for the next batch.
    from types import SimpleNamespace

    from ingest import pipeline

    path = hostile_odds(tmp_path / "odds.json", games=1200, books=2)
    parsed = odds_api.parse(path, TS)
    log = SimpleNamespace(resolver=_CountingResolver(), ingest_worker=True)

    async def run() -> tuple[int, list]:
        batches = pipeline._prepared(parsed, log)
        out = [await anext(batches)]
        for _ in range(600):  # the run holds its first batch; the worker builds on
            if log.resolver.resolved >= pipeline.BUILT_AHEAD + 3:
                break
            await asyncio.sleep(0.05)
        held = log.resolver.resolved
        out += [b async for b in batches]
        return held, out

    held, out = asyncio.run(run())
    # claims of batches 0 and 1 were resolved before batch 0 was handed on; with the first
    # batch held, those of the BUILT_AHEAD batches queued behind it and of the one after
    assert held >= pipeline.BUILT_AHEAD + 3, held
    assert _shape(out) == _shape(_inline(path))  # and the run's batches are the inline path's


def test_the_runs_side_of_the_pipe_reads_whole_messages_however_they_are_cut():
    # The run reads the worker's pipe in the chunks the event loop reads (up to 256 KiB, or
    # less): a chunk may end inside a message's 8-byte length, hold several messages, or be a
    # part of one message of MBs. Each message is queued whole, once, in order; None at the end.
    rng = random.Random(5)
    messages = [b"", b"x", os.urandom(7), os.urandom(9), os.urandom(3 << 20), b"claims", os.urandom(1000)]
    stream = b"".join(len(m).to_bytes(8, "big") + m for m in messages)
    byte_by_byte = list(range(1, 64))  # through the small messages' lengths and bodies
    for cuts in ([], byte_by_byte, [3, 8, 9, 15, 16, 17, 30], sorted(rng.sample(range(1, len(stream)), 400))):
        queue: asyncio.Queue = asyncio.Queue()
        reader = worker._Messages(queue)
        for start, end in zip([0, *cuts], [*cuts, len(stream)]):
            reader.data_received(stream[start:end])
        reader.eof_received()
        got = [queue.get_nowait() for _ in range(queue.qsize())]
        assert got == [*messages, None], [len(g) if g is not None else None for g in got]
