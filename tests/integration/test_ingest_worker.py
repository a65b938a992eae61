"""A run through the worker process (ingest/worker.py) leaves the log, the dead letters and the
registry of appended events exactly as an inline run does (real broker, real Postgres): the
same records on the same partitions in the same order, byte for byte, and a second run of
either kind appends nothing."""

from __future__ import annotations

import msgspec

from ingest import odds_api
from ingest.deadletters import read_dead_letters
from ingest.event_log import open_event_log
from ingest.export import read_log
from ingest.pipeline import ingest
from tests.unit.test_ingest_worker import TS, hostile_odds


def _fresh(settings, suffix: str):
    return type(settings)(**{**{f: getattr(settings, f) for f in settings.__struct_fields__},
                             "topic_namespace": settings.topic_namespace + suffix})


async def _run(settings, path, forked: bool):
    async with open_event_log(msgspec.structs.replace(settings, ingest_worker=forked), "live") as log:
        assert log.ingest_worker is forked
        first = await ingest(odds_api.parse(path, TS), log)
        log.ingest_worker = not forked  # again, the other way
        again = await ingest(odds_api.parse(path, TS), log)
    # per partition in offset order (the merged order follows broker timestamps, which differ)
    records = sorted([(r.topic, r.partition, r.offset, r.key, r.value) async for r in read_log(settings, "live")])
    letters = [msgspec.structs.replace(d, ingest_ts=TS) for d in await read_dead_letters(settings, "live")]
    return first, again, records, letters


async def test_a_run_through_the_worker_leaves_what_an_inline_run_leaves(settings, topics, tmp_path):
    path = hostile_odds(tmp_path / "odds.json", games=600, books=3)  # three batches
    forked = await _run(settings, path, True)
    inline = await _run(_fresh(settings, "inline."), path, False)
    for first, again, records, letters in (forked, inline):
        assert first.events == first.accepted == len(records) > 4_000 and first.duplicate == 0
        assert first.dead_lettered == len(letters) > 100
        assert (again.accepted, again.duplicate, again.dead_lettered) == (0, first.events, first.dead_lettered)
    assert forked[0].public() | {"events_per_second": 0} == inline[0].public() | {"events_per_second": 0}
    assert forked[0].by_type == inline[0].by_type and forked[0].reasons == inline[0].reasons
    assert forked[2] == inline[2]  # every record: topic, partition, offset, key and bytes
    assert forked[3] == inline[3]
