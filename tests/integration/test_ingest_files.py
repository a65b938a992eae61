"""Every sample file through the real pipeline (real tansu broker, real Postgres): counts add
up, bad records are dead letters with reasons, and a second run appends nothing."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone

from ingest.deadletters import read_dead_letters
from ingest.event_log import open_event_log
from ingest.export import read_log
from ingest.pipeline import ingest
from ingest.samples import live_files
from schemas.events import decode, event_key, event_topic

EXPECTED = {  # file: (records, dead-lettered, events)
    "games_2023_2025.csv": (842, 0, 4033),
    "player_stats_2024_weeks01-03.csv": (935, 0, 1337),
    "injuries_2024_weeks01-10.csv": (3238, 0, 6186),
    "nfl_2021_h2h_decimal.json": (13, 0, 219),
    "nfl_2022_h2h_spreads_totals_american.json": (43, 2, 1695),
    "nfl_2023_draftkings_spreads_american.json": (16, 0, 64),
    "soccer_epl_2024_h2h_decimal.json": (11, 0, 42),
    "soccer_serie_a_2021_h2h_decimal.json": (20, 0, 216),
}


async def ingest_all(settings):
    out = {}
    async with open_event_log(settings, "live") as log:
        for parse, path in live_files():
            out[path.name] = await ingest(parse(path, datetime.now(timezone.utc)), log)
    return out


async def test_every_sample_file_ingests_and_a_second_run_adds_nothing(settings, topics):
    first = await ingest_all(settings)
    for name, s in first.items():
        assert (s.records, s.dead_lettered, s.events) == EXPECTED[name], name
        assert (s.accepted, s.duplicate) == (s.events, 0), name  # the first time, everything is new

    log = [(r.topic, r.key, decode(r.value)) async for r in read_log(settings, "live")]
    events = [e for _, _, e in log]
    assert len(events) == sum(s.accepted for s in first.values()) == len({e.event_id for e in events})
    assert all(topic == event_topic(e) and key == event_key(e).encode() for topic, key, e in log)
    assert Counter(type(e).__name__ for e in events)["PriceQuoted"] == 2382 + 180 + 1620 + 16 + 11 + 176

    letters = await read_dead_letters(settings, "live")
    assert len(letters) == 2 and all(d.reason and d.raw and d.location.startswith("$[") for d in letters)
    assert {d.file for d in letters} == {"nfl_2022_h2h_spreads_totals_american.json"}

    second = await ingest_all(settings)
    for name, s in second.items():
        assert (s.records, s.dead_lettered, s.events, s.accepted, s.duplicate) == (*EXPECTED[name], 0, EXPECTED[name][2])
    assert len([r async for r in read_log(settings, "live")]) == len(events)
    assert len(await read_dead_letters(settings, "live")) == 2  # the same dead letter is not written twice


async def test_a_new_log_epoch_takes_everything_again(settings, topics):
    parse, path = live_files()[0]
    async with open_event_log(settings, "live") as log:
        first = await ingest(parse(path, datetime.now(timezone.utc)), log)
    # a fresh broker (here: fresh topics) is an empty log with a new epoch; Postgres remembers the old one
    fresh = type(settings)(**{**{f: getattr(settings, f) for f in settings.__struct_fields__},
                              "topic_namespace": settings.topic_namespace + "new."})
    async with open_event_log(fresh, "live") as log:
        assert log.epoch != ""
        again = await ingest(parse(path, datetime.now(timezone.utc)), log)
    assert first.accepted == again.accepted == 4033
    assert len([r async for r in read_log(fresh, "live")]) == 4033
