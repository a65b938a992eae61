"""A projector whose live path (faust) falls far behind the log is handed to the bulk path in
its own process, and comes back to the live path at the head (projections/runner.py `keep_up`),
against the real broker and Postgres: seqs gapless, nothing applied twice, read models identical
to a rebuild's (`svc projections verify`)."""

from __future__ import annotations

import asyncio
import signal

from infra.db import connect
from tests.support import projection_events as ev
from tests.support.projection_harness import burst_through_a_hand_back, caught_up, log_shows, seq_runs, start_projector, verified, wire_deltas

FAR_BEHIND = 1_000
GAMES = 12
BOOKS = [f"book{i}" for i in range(4)]
ROUNDS = 20  # 12 games x 4 books x 3 markets x 20 rounds = 2,880 quotes a burst, well past FAR_BEHIND


async def test_a_live_path_far_behind_goes_to_the_bulk_path_and_back(settings, topics, tmp_path):
    games = ev.schedule(GAMES)
    await ev.publish(settings, games)
    log = tmp_path / "projector.log"
    proc = start_projector(settings, log, SVC_LIVE_FAR_BEHIND=str(FAR_BEHIND))
    hold = await connect(settings.database_url)
    try:
        assert await caught_up(settings, 60), log.read_text()[-3000:]
        assert await log_shows(log, "resuming at the tracked offsets", 30), log.read_text()[-3000:]
        await burst_through_a_hand_back(
            settings, log, hold, ev.season_quotes(games, BOOKS, ROUNDS, seed=7, first_minute=1, tag="burst"))
        assert await caught_up(settings, 60), log.read_text()[-3000:]
        # the live path carries what comes next, from where the bulk path left off
        gid = games[0].game_id
        await ev.publish(settings, [ev.state(gid, "live", minute=500, home=7, away=3)])
        assert await caught_up(settings, 30), log.read_text()[-3000:]
        row = await hold.fetchrow("SELECT status, score_home FROM live.games WHERE id = $1", gid)
        assert (row["status"], row["score_home"]) == ("live", 7)
    finally:
        await hold.close()
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(proc.wait, 30)
    text = log.read_text()
    assert code == 0, text[-3000:]
    assert "Traceback" not in text, text[-3000:]
    # every topic's seqs 1..n once each: nothing skipped, nothing applied (and published) twice
    runs = seq_runs(await wire_deltas(settings))
    assert runs and all(seqs == list(range(1, len(seqs) + 1)) for seqs in runs.values()), runs
    assert runs[f"game:{games[0].game_id}"][-1] >= 2
    result = await verified(settings)
    assert result.identical, result.differences
