"""A game's search entry is written when what search reads of it changed, never for a score,
clock or status report (each write tells every API process the search index changed), and is
a function of the game's state: written incrementally or all at once, the same row."""

from __future__ import annotations

from datetime import datetime, timezone

from hypothesis import given, settings

from projections.reducers import reduce
from projections.rows import batch_rows, game_search_row
from tests.support import projection_events as ev
from tests.support.game_strategies import GID, G, game_events



def written(events) -> tuple[object, list[tuple[str, tuple[int, int]]]]:
    """The state after `events`, and per event the rows it wrote: (kind of event, (games rows, search rows))."""
    state, out = None, []
    for e in events:
        new, _ = reduce(state, e, 0)
        rows = batch_rows({GID: state}, {GID: new}, {}, 0).rows
        out.append((type(e).__name__, (len(rows.get("games", [])), len(rows.get("search_index", [])))))
        state = new
    return state, out


def test_a_score_report_writes_the_game_and_no_search_entry():
    state, out = written([G, ev.state(GID, "live", minute=5, home=7, away=0),
                          ev.state(GID, "live", minute=9, home=7, away=3)])
    assert out == [("GameScheduled", (1, 1)), ("GameStateChanged", (1, 0)), ("GameStateChanged", (1, 0))]


def test_a_change_search_reads_writes_the_entry_again():
    kickoff = datetime(2024, 9, 6, 2, 0, tzinfo=timezone.utc)
    _, out = written([G, ev.state(GID, "live", minute=5, home=7, away=0), ev.rescheduled(GID, kickoff, minute=20)])
    assert out[-1] == ("GameRescheduled", (1, 1))


@settings(max_examples=100, deadline=None)
@given(game_events())
def test_the_last_entry_written_is_the_entry_of_the_final_state(events):
    """What an incremental projection leaves in the index is what a rebuild from the final state
    writes; and no state report alone ever wrote an entry."""
    state, last = None, None
    for e in events:
        new, _ = reduce(state, e, 0)
        rows = batch_rows({GID: state}, {GID: new}, {}, 0).rows.get("search_index", [])
        if type(e).__name__ == "GameStateChanged":
            assert rows == []
        last = rows[-1] if rows else last
        state = new
    if state.origin is not None and batch_rows({GID: None}, {GID: state}, {}, 0).rows.get("games"):
        assert last == game_search_row(state)
