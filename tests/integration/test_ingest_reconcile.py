"""A run that died after the broker acknowledged a batch and before it recorded it: the next run
finds those events in the log, records them, and appends nothing twice (ingest/reconcile.py)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone

import asyncpg

from ingest import nflverse_games
from ingest.event_log import open_event_log
from ingest.export import read_log
from ingest.pipeline import ingest
from ingest.samples import SAMPLES
from schemas.events import decode

GAMES = SAMPLES / "nflverse" / "games_2023_2025.csv"


class Died(Exception):
    """The run stops here, as a SIGKILL would stop it (nothing after runs)."""


async def log_ids(settings) -> Counter:
    return Counter([decode(r.value).event_id async for r in read_log(settings, "live")])


async def marks(settings) -> dict:
    conn = await asyncpg.connect(settings.database_url)
    try:
        return {(r[0], r[1]): r[2] for r in await conn.fetch("SELECT topic, partition, mark FROM ingest.marks")}
    finally:
        await conn.close()


async def test_events_acknowledged_but_not_recorded_are_not_appended_again(settings, topics):
    try:
        async with open_event_log(settings, "live") as log:
            first = await ingest(nflverse_games.parse(GAMES, datetime.now(timezone.utc)), log)
            assert first.accepted > 4000
            # the state a SIGKILL between the broker's acknowledgement and the record leaves:
            # the events in the log, none of them in the registry
            await log.appended.conn.execute("DELETE FROM ingest.appended")
            raise Died
    except Died:
        pass
    in_log = await log_ids(settings)
    assert len(in_log) == first.accepted and set(in_log.values()) == {1}
    assert set((await marks(settings)).values()) == {0}  # the run did not end: marks where it began

    # the next run finds them in the log, records them, and sends none of them again
    async with open_event_log(settings, "live") as log:
        again = await ingest(nflverse_games.parse(GAMES, datetime.now(timezone.utc)), log)
    assert again.accepted == 0 and again.duplicate == first.events
    assert await log_ids(settings) == in_log
    ends = await marks(settings)
    assert sum(ends.values()) == len(in_log)  # the marks moved to the log's end


async def test_a_run_that_ends_cleanly_moves_the_marks_past_what_it_appended(settings, topics):
    async with open_event_log(settings, "live") as log:
        first = await ingest(nflverse_games.parse(GAMES, datetime.now(timezone.utc)), log)
    # it alone appended: the next run has nothing to read again
    assert sum((await marks(settings)).values()) == first.accepted
