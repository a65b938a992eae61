"""Which entities a question names (api.answers.decide.pick_entities). Found when the API tests'
data came from the real fold: the projector indexes Crystal Palace with its nickname ("crystal
palace eagles"), "packers eagles" is 0.81 from "palace eagles", and "packers eagles total week 1
2024" was answered about Crystal Palace."""

from __future__ import annotations

from datetime import datetime, timezone

from api.answers.decide import pick_entities


def _hit(phrase: str, tid: str, name: str, competition: str, terms: str, term: float, name_score: float) -> dict:
    return {"phrase": phrase, "id": tid, "kind": "team", "name": name, "competition": competition, "terms": terms,
            "term_score": term, "name_score": name_score, "player_team_id": None, "player_position": None,
            "as_of": datetime(2024, 9, 1, tzinfo=timezone.utc)}


PALACE_TERMS = "crystal palace eagles"
# the index's hits for the phrases of "packers eagles total week 1 2024" (api.answers.names)
HITS = [
    _hit("packers", "tm_gb", "Green Bay Packers", "nfl", "green bay packers gb", 1.0, 1.0),
    _hit("eagles", "tm_phi", "Philadelphia Eagles", "nfl", "philadelphia eagles phi", 1.0, 1.0),
    _hit("eagles", "tm_cry", "Crystal Palace", "epl", PALACE_TERMS, 1.0, 0.0),
    _hit("packers eagles", "tm_cry", "Crystal Palace", "epl", PALACE_TERMS, 0.815, 0.0),
]


def test_words_that_each_name_a_team_exactly_are_not_one_approximate_name():
    named = pick_entities(HITS, ["packers eagles", "packers", "eagles"])
    assert [t.id for t in named.teams] == ["tm_gb", "tm_phi"]


def test_an_approximate_name_of_several_words_still_counts_when_its_words_name_nothing_exactly():
    # "crystal palce": a typo; "palce" alone names nothing
    hits = [_hit("crystal palce", "tm_cry", "Crystal Palace", "epl", PALACE_TERMS, 0.96, 0.96),
            _hit("crystal", "tm_cry", "Crystal Palace", "epl", PALACE_TERMS, 1.0, 1.0)]
    named = pick_entities(hits, ["crystal palce", "crystal", "palce"])
    assert [(t.id, t.phrase) for t in named.teams] == [("tm_cry", "crystal palce")]
