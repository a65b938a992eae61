"""Hypothesis strategies for one game's events in any order: its schedule from two sources,
state reports and reschedules (what the game reducer and the game rows must fold alike)."""

from __future__ import annotations

from datetime import datetime, timezone

from hypothesis import strategies as st

from tests.support import projection_events as ev

G = ev.game()
GID = G.game_id


@st.composite
def game_events(draw):
    events = [G, ev.game(minute=draw(st.integers(0, 20)), source="The Odds API", week=None, season=None,
                         venue=draw(st.sampled_from([None, "Arrowhead"])))]
    for _ in range(draw(st.integers(0, 6))):
        events.append(ev.state(GID, draw(st.sampled_from(["live", "final"])), minute=draw(st.integers(0, 60)),
                               home=draw(st.integers(0, 30)), away=draw(st.integers(0, 30))))
    for _ in range(draw(st.integers(0, 2))):
        kickoff = datetime(2024, 9, 6, draw(st.integers(0, 3)), 0, tzinfo=timezone.utc)
        events.append(ev.rescheduled(GID, kickoff, minute=draw(st.integers(0, 60))))
    return draw(st.permutations(events))
