"""Game reducer: identity fields take the newest value any source gave (order-free), the live
state is the newest report, and `game.state` deltas go out only when the topic's view changed."""

from __future__ import annotations

from datetime import datetime, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from projections.deltas import GAME_STATE
from projections.reducers import reduce
from schemas.wire import Score
from tests.support import projection_events as ev
from tests.support.game_strategies import GID, G, game_events



def run(events):
    state, deltas = None, []
    for e in events:
        state, out = reduce(state, e, 0)
        deltas.extend(out)
    return state, deltas


@settings(max_examples=150, deadline=None)
@given(game_events(), st.data())
def test_game_state_is_a_function_of_the_set_of_events(events, data):
    a, _ = run(events)
    b, _ = run(data.draw(st.permutations(events)) + data.draw(st.lists(st.sampled_from(events), max_size=4)))
    assert (a.fields, a.origin, a.known_by, a.play, a.as_of) == (b.fields, b.origin, b.known_by, b.play, b.as_of)


@settings(max_examples=150, deadline=None)
@given(game_events())
def test_newest_state_report_wins_and_seqs_count_deltas(events):
    state, deltas = run(events)
    states = [e for e in events if type(e).__name__ == "GameStateChanged"]
    if states:
        newest = max(states, key=lambda e: (e.source_ts, e.event_id))
        assert (state.play.status, state.play.score_home, state.play.score_away) == (
            newest.status, newest.score_home, newest.score_away)
    assert [d.seq for d in deltas] == list(range(1, len(deltas) + 1))
    assert state.seq == len(deltas)
    assert all(d.type == GAME_STATE and d.wire_topic == f"game:{GID}" for d in deltas)


def test_fields_merge_across_sources_without_erasing():
    nflverse = ev.game(minute=0, week=1, season="2024")
    odds_api = ev.game(minute=5, source="The Odds API", week=None, season=None, venue="Arrowhead")
    state, deltas = run([odds_api, nflverse])
    f = {k: v for k, (v, _) in state.fields.items()}
    assert f["week"] == 1 and f["season"] == "2024" and f["venue"] == "Arrowhead"
    assert state.origin.source == "nflverse"  # the least-stamped schedule is the identity origin
    assert {s for s, _ in state.known_by} == {"nflverse", "The Odds API"}


def test_deltas_only_on_visible_change():
    state, d = run([G])
    assert [(x.seq, x.data.status) for x in d] == [(1, "scheduled")]
    state, d = reduce(state, ev.state(GID, "live", minute=1, home=7, away=0, last_play="TD"), 0)
    assert d[0].seq == 2 and d[0].data.score == Score(home=7, away=0) and d[0].data.last_play == "TD"
    # a second source reporting the same state later: provenance moves, nothing visible does
    state2, d = reduce(state, ev.state(GID, "live", minute=2, home=7, away=0, last_play="TD", source="other"), 0)
    assert d == [] and state2.play.origin.source == "other"
    # an older report never overrides
    state3, d = reduce(state2, ev.state(GID, "final", minute=0, home=0, away=3), 0)
    assert d == [] and state3 is state2
    # a reschedule is visible on the game topic
    _, d = reduce(state2, ev.rescheduled(GID, datetime(2024, 9, 7, 17, 0, tzinfo=timezone.utc), minute=3), 0)
    assert d[0].seq == 3 and d[0].data.kickoff_at == datetime(2024, 9, 7, 17, 0, tzinfo=timezone.utc)


def test_state_before_the_schedule_shows_once_the_game_is_scheduled():
    state, d = run([ev.state(GID, "live", minute=1, home=3, away=0)])
    assert d == []  # no game topic before the game is known
    state, d = reduce(state, G, 0)
    assert [(x.seq, x.data.status, x.data.score) for x in d] == [(1, "live", Score(home=3, away=0))]


def test_an_untimed_result_is_as_of_when_read_never_its_ordering_time():
    """Issue 20 item 7: nflverse gives no time for a final; its event carries an ordering time
    (kickoff + 4 h) that neither the game's `as_of` nor the Wire delta shows."""
    import msgspec

    from schemas.events import stamp

    g = ev.game()
    final = ev.state(g.game_id, "final", minute=240, home=27, away=20, period="Q4", clock="00:00", source="nflverse")
    read_at = datetime(2026, 1, 1, tzinfo=timezone.utc)
    final = stamp(msgspec.structs.replace(final, ingest_ts=read_at))
    state, _ = reduce(None, g, 0)
    state, deltas = reduce(state, final, 0)
    (delta,) = deltas
    assert state.as_of == delta.source_ts == int(read_at.timestamp() * 1_000_000)
    assert state.play.origin.source_ts < state.as_of  # the ordering time stays internal
