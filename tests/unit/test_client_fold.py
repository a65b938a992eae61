"""The client's fold of Wire market and game data (client/fold.py) agrees with the server's own
(wire.snapshots.apply_delta) on any sequence of changed and removed lines."""

from __future__ import annotations

from hypothesis import given, strategies as st

from client.fold import fold
from wire.snapshots import apply_delta

KEYS = ["", "-3.5", "-3", "47.5", "48"]


def _line(key: str, price: float, main: bool) -> dict:
    return {"line_key": key, "point": float(key) if key else None, "is_main": main, "books": 3,
            "hold": 0.04, "basis": "consensus", "outcomes": [{"selection": "home", "price": price}]}


def _data(lines: list[dict], removed: list[str], status: str) -> dict:
    return {"market_id": "mkt_x", "game_id": "gm_x", "kind": "game", "type": "spreads", "period": "full",
            "participant_id": None, "name": None, "status": status, "reason": None, "main_point": None,
            "books": 3, "lines": lines, "removed_lines": removed}


changes = st.lists(st.tuples(
    st.lists(st.tuples(st.sampled_from(KEYS), st.floats(1.01, 20), st.booleans()), max_size=4),
    st.lists(st.sampled_from(KEYS), max_size=2, unique=True),
    st.sampled_from(["open", "suspended"])), max_size=8)


def _sorted(state: dict) -> dict:
    return {**{k: v for k, v in state.items() if k != "removed_lines"},
            "lines": sorted(state.get("lines", []), key=lambda line: line["line_key"])}


@given(changes)
def test_market_deltas_fold_as_the_server_folds_them(steps):
    snapshot = _data([_line("-3.5", 1.9, True)], [], "open")
    ours, theirs = fold(None, "market.update", snapshot), dict(snapshot)
    for lines, removed, status in steps:
        unique = {k: _line(k, p, m) for k, p, m in lines}
        delta = _data(list(unique.values()), [k for k in removed if k not in unique], status)
        ours = fold(ours, "market.update", delta)
        theirs = apply_delta(theirs, "market.update", delta)
    assert ours == _sorted(theirs)


def test_game_state_replaces_the_whole_state():
    state = fold(None, "game.state", {"game_id": "gm_x", "status": "scheduled", "score": None})
    after = fold(state, "game.state", {"game_id": "gm_x", "status": "live", "score": {"home": 7, "away": 0}})
    assert after == {"game_id": "gm_x", "status": "live", "score": {"home": 7, "away": 0}}


def test_an_answer_version_replaces_the_one_before_and_svc_watch_says_what_it_supersedes():
    from types import SimpleNamespace

    from cli.commands.watch import _summary

    first = {"object": "answer", "answer_id": "ans_a", "supersedes": None, "summary": "Old.", "figures": []}
    second = {**first, "answer_id": "ans_b", "supersedes": "ans_a", "summary": "New."}
    state = fold(fold(None, "answer.update", first), "answer.update", second)
    assert state == second
    assert _summary(SimpleNamespace(topic="answer:ans_a", state=state)) == "ans_b (supersedes ans_a): New."
