"""Export -> replay into a fresh log -> export: the same event streams, entity by entity."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import datetime, timedelta, timezone

import msgspec

from infra.topics import ensure_topics
from ingest.deadletters import read_dead_letters
from ingest.event_log import open_event_log
from ingest.export import ExportLine, export, read_log
from ingest.pipeline import ingest
from ingest.replay import replay
from ingest.samples import live_files


def fresh(settings, suffix):
    return msgspec.structs.replace(settings, topic_namespace=settings.topic_namespace + suffix)


def streams(path):
    """Per topic and partition, the events' bytes in order; per entity (key), its events in order."""
    by_partition, by_key = defaultdict(list), defaultdict(list)
    for raw in path.read_bytes().splitlines():
        line = msgspec.json.decode(raw, type=ExportLine)
        by_partition[(line.topic, line.partition)].append(bytes(line.event))
        by_key[line.key].append(json.loads(bytes(line.event))["event_id"])
    return by_partition, by_key


async def test_export_replay_export_gives_identical_streams(settings, topics, tmp_path):
    async with open_event_log(settings, "live") as log:
        for parse, path in live_files()[:4]:  # schedule, stats, injuries, one odds file
            await ingest(parse(path, datetime.now(timezone.utc)), log)
    first = tmp_path / "first.jsonl"
    counts = await export(settings, "live", first)
    assert counts == {"lines": 4033 + 1337 + 6186 + 219, "skipped": 0}
    stamps = [datetime.fromisoformat(json.loads(line)["ts"]) for line in first.read_text().splitlines()]
    assert stamps == sorted(stamps)  # merged by record time

    target = fresh(settings, "replayed.")
    await ensure_topics(target)
    async with open_event_log(target, "live") as log:
        summary = await replay(first, log, speed=None)
        again = await replay(first, log, speed=None)
    assert (summary.records, summary.events, summary.accepted, summary.dead_lettered) == (counts["lines"],) * 3 + (0,)
    assert (again.accepted, again.duplicate) == (0, counts["lines"])

    second = tmp_path / "second.jsonl"
    assert await export(target, "live", second) == counts
    a, b = streams(first), streams(second)
    assert a == b  # every partition's events, byte for byte in order; so every entity's too
    assert sum(map(len, a[0].values())) == counts["lines"] and len(a[1]) > 1000


async def test_export_window_and_bad_lines(settings, topics, tmp_path):
    parse, path = live_files()[3]
    async with open_event_log(settings, "live") as log:
        await ingest(parse(path, datetime.now(timezone.utc)), log)
    out = tmp_path / "all.jsonl"
    await export(settings, "live", out)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    last = datetime.fromisoformat(rows[-1]["ts"])
    later = tmp_path / "later.jsonl"
    assert (await export(settings, "live", later, since=last + timedelta(seconds=1)))["lines"] == 0
    window = tmp_path / "window.jsonl"
    assert (await export(settings, "live", window, since=last - timedelta(hours=1), until=last))["lines"] == len(rows)

    broken = tmp_path / "broken.jsonl"
    broken.write_text(out.read_text() + "not json\n" + json.dumps({**rows[0], "event": {"type": "nope"}}) + "\n")
    target = fresh(settings, "bad.")
    await ensure_topics(target)
    async with open_event_log(target, "live") as log:
        s = await replay(broken, log, speed=None)
    assert (s.records, s.dead_lettered, s.events, s.accepted) == (len(rows) + 2, 2, len(rows), len(rows))
    letters = await read_dead_letters(target, "live")
    assert [d.location for d in letters] == [f"line {len(rows) + 1}", f"line {len(rows) + 2}"]
    assert all(d.reason for d in letters)


async def test_replay_keeps_relative_timing(settings, topics, tmp_path):
    lines = []
    parse, path = live_files()[3]
    async with open_event_log(settings, "live") as log:
        await ingest(parse(path, datetime.now(timezone.utc)), log)
    src = tmp_path / "src.jsonl"
    await export(settings, "live", src)
    start = datetime(2024, 9, 8, 17, tzinfo=timezone.utc)
    for i, line in enumerate(src.read_text().splitlines()[:30]):  # restamp: 30 records 10 s apart
        row = json.loads(line)
        row["ts"] = (start + timedelta(seconds=10 * i)).isoformat()
        lines.append(json.dumps(row))
    timed = tmp_path / "timed.jsonl"
    timed.write_text("\n".join(lines) + "\n")
    target = fresh(settings, "timed.")
    await ensure_topics(target)
    async with open_event_log(target, "live") as log:
        s = await replay(timed, log, speed=290.0)  # 290 s of recording in 1 s
    assert s.accepted == 30 and 0.9 <= s.seconds < 3.0
    got = [r async for r in read_log(target, "live")]
    spread = (max(r.timestamp_ms for r in got) - min(r.timestamp_ms for r in got)) / 1000
    assert 0.8 <= spread <= 2.5
