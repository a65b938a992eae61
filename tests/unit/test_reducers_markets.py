"""Market reducer properties: newest quote per book and line wins whatever the order, a
redelivered or duplicated event changes nothing, a delta goes out exactly when what a Wire
client sees changed, and seqs run 1, 2, 3, ..."""

from __future__ import annotations

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from projections.lines import fields_of
from projections.deltas import MARKET_SUSPENDED, MARKET_UPDATE
from projections.reducers import reduce
from projections.reducers.common import Owned
from tests.support import projection_events as ev
from tests.unit.consensus_reference import reference_market

WINDOW_US = 600 * 1_000_000
GID = ev.game().game_id
american = st.one_of(st.integers(-300, -100), st.integers(100, 300))


@st.composite
def market_events(draw):
    events = []
    for _ in range(draw(st.integers(1, 12))):
        events.append(ev.quote(
            GID, draw(st.sampled_from(["a", "b", "c", "d"])), [draw(american), draw(american)],
            market_type="totals", point=draw(st.sampled_from(["44.5", "45", "45.5"])),
            minute=draw(st.integers(0, 30)),
        ))
    mid = events[0].market_id
    for _ in range(draw(st.integers(0, 3))):
        book = draw(st.sampled_from([None, "a", "b"]))
        minute = draw(st.integers(0, 30))
        maker = ev.suspended if draw(st.booleans()) else ev.reopened
        events.append(maker(GID, mid, book=book, minute=minute))
    return draw(st.permutations(events))


def run(events):
    state, deltas = None, []
    for e in events:
        state, out = reduce(state, e, WINDOW_US)
        deltas.extend(out)
    return state, deltas


def visible(state):
    """What the market topic shows, from the state's consensus (seq aside); nothing before the
    first quote names the market."""
    if state is None or not state.markets:
        return None
    (m,) = state.markets.values()
    if m.origin is None:
        return None
    lines = {k: (l.consensus.visible, k == m.main_key) for k, l in m.lines.items() if l.consensus is not None}
    return (m.status, m.main_key, lines)


def without_seq(state):
    (m,) = state.markets.values()
    return msgspec.structs.replace(m, seq=0)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(market_events(), st.data())
def test_state_is_a_function_of_the_set_of_events(events, data):
    # any order, and any event delivered again anywhere after its first delivery
    shuffled = data.draw(st.permutations(events))
    with_duplicates = list(shuffled)
    for _ in range(data.draw(st.integers(0, 5))):
        i = data.draw(st.integers(0, len(with_duplicates) - 1))
        j = data.draw(st.integers(i + 1, len(with_duplicates)))
        with_duplicates.insert(j, with_duplicates[i])
    a, _ = run(events)
    b, _ = run(with_duplicates)
    assert without_seq(a) == without_seq(b)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(market_events(), st.data())
def test_redelivery_emits_nothing_and_changes_nothing(events, data):
    state, deltas = run(events)
    again, more = run([*events, *data.draw(st.lists(st.sampled_from(events), max_size=6))])
    assert [(d.wire_topic, d.seq) for d in more] == [(d.wire_topic, d.seq) for d in deltas]
    assert again == state


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(market_events())
def test_a_delta_exactly_when_the_visible_market_changed(events):
    state, seq = None, 0
    for i, e in enumerate(events):
        before = visible(state)
        state, out = reduce(state, e, WINDOW_US)
        after = visible(state)
        quoted = any(type(x).__name__ == "PriceQuoted" for x in events[: i + 1])
        changed = after != before
        assert len(out) == (1 if changed else 0)
        if out:
            seq += 1
            assert out[0].seq == seq  # 1, 2, 3, ... on the market's topic
            assert out[0].type in (MARKET_UPDATE, MARKET_SUSPENDED)
        # and the consensus itself is the reference's
        lines, main, status = reference_market(events[: i + 1], 600)
        if state.markets and quoted:
            (m,) = state.markets.values()
            assert m.status == status
            assert m.main_key == main
            assert {k for k, l in m.lines.items() if l.consensus is not None} == set(lines)


def test_requote_of_the_same_prices_is_not_a_delta_and_older_quotes_never_win():
    q1 = ev.quote(GID, "a", [-110, -110], minute=5)
    state, d1 = run([q1])
    assert [d.seq for d in d1] == [1]
    same_later, d2 = reduce(state, ev.quote(GID, "a", [-110, -110], minute=6), WINDOW_US)
    assert d2 == []
    older, d3 = reduce(same_later, ev.quote(GID, "a", [-200, 170], minute=1), WINDOW_US)
    assert d3 == []
    (before,) = same_later.markets.values()
    (after,) = older.markets.values()
    assert after.lines is before.lines  # the stale quote only moved the market's origin earlier
    assert after.origin.source_ts < before.origin.source_ts


def test_suspension_is_a_market_suspended_delta_and_a_newer_quote_reopens_the_book():
    q = ev.quote(GID, "a", [-110, -110], minute=1)
    state, _ = run([q])
    state, out = reduce(state, ev.suspended(GID, q.market_id, minute=2, reason="review"), WINDOW_US)
    assert [(d.type, d.seq) for d in out] == [(MARKET_SUSPENDED, 2)]
    assert out[0].data.status == "suspended" and out[0].data.status_reason == "review"
    assert out[0].data.removed_lines == [""]
    state, out = reduce(state, ev.quote(GID, "a", [-105, -115], minute=3), WINDOW_US)
    assert [(d.type, d.seq) for d in out] == [(MARKET_UPDATE, 3)]
    assert out[0].data.status == "open" and out[0].data.lines[0].books == 1


def test_market_delta_payload():
    state, out = run([ev.quote(GID, "a", [-110, -110], market_type="spreads", point="-3.5", minute=1)])
    data = out[0].data
    assert data.type == "spreads" and data.main_point == -3.5 and data.books == 1
    (line,) = data.lines
    assert line.is_main and line.point == -3.5
    assert [(o.selection, o.point) for o in line.outcomes] == [("home", -3.5), ("away", 3.5)]
    assert set(line.outcomes[0].probability) == {"multiplicative"}


@st.composite
def game_market_events(draw):
    """Quotes on several markets of one game (so the game's markets dict is shared and copied
    too), repeated events among them, and suspensions of any market or book, in any order."""
    types = {"h2h": [None], "spreads": ["-3", "-3.5"], "totals": ["44.5", "45"]}
    events = []
    for _ in range(draw(st.integers(1, 16))):
        mtype = draw(st.sampled_from(sorted(types)))
        events.append(ev.quote(
            GID, draw(st.sampled_from(["a", "b", "c"])), [draw(american), draw(american)],
            market_type=mtype, point=draw(st.sampled_from(types[mtype])), minute=draw(st.integers(0, 20)),
        ))
    markets = sorted({e.market_id for e in events})
    for _ in range(draw(st.integers(0, 4))):
        maker = ev.suspended if draw(st.booleans()) else ev.reopened
        events.append(maker(GID, draw(st.sampled_from(markets)), book=draw(st.sampled_from([None, "a", "b"])),
                            minute=draw(st.integers(0, 20))))
    events += draw(st.lists(st.sampled_from(events), max_size=3))  # redelivered
    return draw(st.permutations(events))


def _packed(state) -> bytes:
    return msgspec.msgpack.encode(state, enc_hook=fields_of)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game_market_events(), st.data())
def test_a_fold_in_batches_changing_its_own_objects_gives_what_event_by_event_gives(events, data):
    """The market reducer has one code path, copy-on-write (`Owned`): within a batch it changes
    in place what the batch made; called without `own` it owns only what the call makes. Folding
    in batches gives the same states and delta payloads as folding event by event, and neither
    way changes a state handed in (the batch's start states, or any state of the event-by-event
    fold)."""
    state, single_deltas, seen = None, [], []
    for e in events:
        seen.append((state, _packed(state)))
        state, out = reduce(state, e, WINDOW_US)
        single_deltas.extend(out)
    single = state
    cut = sorted(data.draw(st.lists(st.integers(0, len(events)), max_size=3)))
    state, deltas, starts = None, [], []
    for lo, hi in zip([0, *cut], [*cut, len(events)]):  # batches: `own` lives for one
        own = Owned()
        starts.append((state, _packed(state)))
        for e in events[lo:hi]:
            state, out = reduce(state, e, WINDOW_US, own)
            deltas.extend(out)
    assert state == single and _packed(state) == _packed(single)
    assert [(d.wire_topic, d.seq, d.type, d.data) for d in deltas] == [
        (d.wire_topic, d.seq, d.type, d.data) for d in single_deltas]
    for start, packed in starts + seen:  # nothing handed in was changed in place
        assert _packed(start) == packed
