"""Player reducer: identity, the current injury report, latest status per source, the five
newest news items (newest first), and per-game stat lines from which season lines derive."""

from __future__ import annotations


from hypothesis import given, settings
from hypothesis import strategies as st

from projections import season_lines
from projections.reducers import reduce
from tests.support import projection_events as ev

P = ev.player("00-0033873", "Patrick Mahomes")
PID = P.player_id


def run(events):
    state = None
    for e in events:
        state, out = reduce(state, e, 0)
        assert out == []  # players have no Wire topic
    return state


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 500), st.integers(0, 3)), min_size=1, max_size=12), st.data())
def test_news_keeps_the_five_newest_newest_first_whatever_the_order(items, data):
    events = [ev.news(PID, f"headline {m} {k}", minute=m) for m, k in items]
    delivered = data.draw(st.permutations(events)) + data.draw(st.lists(st.sampled_from(events), max_size=4))
    state = run([P, *delivered])
    unique = {e.event_id: e for e in events}.values()
    expected = sorted(unique, key=lambda e: (e.published_at, e.event_id), reverse=True)[:5]
    assert [n.headline for n in state.news] == [e.headline for e in expected]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 6), st.integers(0, 100), st.sampled_from(["Out", "Questionable", None])),
                min_size=1, max_size=8), st.data())
def test_current_injury_is_the_latest_week_then_the_newest_version(reports, data):
    events = [ev.injury(PID, status, week=week, minute=minute) for week, minute, status in reports]
    state = run([P, *data.draw(st.permutations(events))])
    newest = max(events, key=lambda e: (e.season, e.week, e.source_ts, e.event_id))
    assert (state.injury.week, state.injury.status) == (newest.week, newest.status)
    with_status = [e for e in events if e.status]
    if with_status:
        latest = max(with_status, key=lambda e: (e.season, e.week, e.source_ts, e.event_id))
        assert state.availability["nflverse"].status == latest.status.lower()


def test_identity_updates_and_team_change():
    state = run([P, ev.player_moved(PID, "LV", minute=5), ev.player_moved(PID, "NE", minute=2)])
    f = {k: v for k, (v, _) in state.fields.items()}
    assert f["team_id"] == ev.team("LV").team_id  # the newest update wins
    assert f["name"] == "Patrick Mahomes" and f["position"] == "QB"


def test_season_lines_total_and_per_game():
    g1, g2 = ev.game().game_id, ev.game(home="BUF").game_id
    state = run([
        P,
        ev.stat_line(PID, g1, 1, {"passing_yards": 291, "passing_epa": "10.25"}, minute=0),
        ev.stat_line(PID, g2, 2, {"passing_yards": 205, "passing_epa": "-1.5", "sacks": 2}, minute=0),
        # a corrected week 2 line replaces the first version
        ev.stat_line(PID, g2, 2, {"passing_yards": 210, "passing_epa": "-1.5", "sacks": 2}, minute=9),
    ])
    (group,) = season_lines.group(state.lines.values()).values()
    season = season_lines.season_stats(group, "QB")
    assert season["total"] == {"passing_epa": "8.75", "passing_yards": 501, "sacks": 2}
    assert season["per_game"] == {"passing_epa": "4.375", "passing_yards": "250.5", "sacks": 1}
    assert season["rate"] == {}
