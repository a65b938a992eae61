"""Search ranking (pure): a whole name or nickname before a typed prefix before a close spelling;
matchup queries; ties to the team before a player sharing the word."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from api.search_rank import EXACT, phrase_score, rank_key, sides


def order(q, candidates):
    """candidates: (kind, name, terms); the names, best first."""
    matchup = sides(q)
    return [c[1] for c in sorted(candidates, key=lambda c: rank_key(q, matchup, c[0], c[1], c[2], c[1]))]


def test_an_exact_nickname_beats_a_fuzzy_prefix():
    cands = [("player", "Bucky Irving", "bucky irving"), ("team", "Tampa Bay Buccaneers", "tampa bay buccaneers tb bucs")]
    assert order("Bucs", cands)[0] == "Tampa Bay Buccaneers"


def test_the_closer_spelling_wins():
    cands = [("team", "Chelsea", "chelsea blues"), ("team", "Kansas City Chiefs", "kansas city chiefs kc")]
    assert order("chefs", cands)[0] == "Kansas City Chiefs"


def test_a_matchup_needs_both_teams():
    cands = [("game", "Ravens vs Titans", "baltimore ravens at tennessee titans"),
             ("game", "Baltimore Ravens at Kansas City Chiefs", "baltimore ravens at kansas city chiefs"),
             ("team", "Kansas City Chiefs", "kansas city chiefs kc")]
    assert order("Chiefs vs Ravens", cands)[0] == "Baltimore Ravens at Kansas City Chiefs"
    assert sides("Chiefs vs Ravens") == ("chiefs", "ravens") and sides("bills @ rams") == ("bills", "rams")
    assert sides("Brighton and Hove Albion") is None and sides("Kansas City Chiefs") is None


def test_a_team_before_a_player_who_shares_the_word():
    cands = [("player", "Dallas Turner", "dallas turner"), ("team", "Dallas Cowboys", "dallas cowboys dal")]
    assert order("dallas", cands)[0] == "Dallas Cowboys"


_word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=8)


@given(st.lists(_word, min_size=1, max_size=4), st.integers(0, 3))
def test_any_whole_phrase_of_the_terms_scores_exact_and_nothing_else_does(words, start):
    terms = " ".join(words)
    start = min(start, len(words) - 1)
    assert phrase_score(" ".join(words[start:]), terms) == EXACT
    assert phrase_score("zz" + words[0] + "q", terms) < EXACT


def _full_match_score(query: str, terms: str) -> float:
    """phrase_score as first written: the full difflib match of every window, no bound skipping."""
    from difflib import SequenceMatcher

    from api.search_rank import FUZZY, PREFIX, REORDERED, _windows
    if f" {query} " in f" {terms} ":
        return EXACT
    q_words, best = query.split(), 0.0
    for window in _windows(terms.split(), len(q_words)):
        if len(q_words) > 1 and sorted(window.split()) == sorted(q_words):
            return REORDERED
        if window.startswith(query):
            score = PREFIX + 0.09 * len(query) / len(window)
        else:
            score = FUZZY * SequenceMatcher(None, query, window, autojunk=False).ratio()
        best = max(best, score)
    return best


_near = st.text(alphabet="abcehiklnrst", min_size=1, max_size=7)  # few letters: many near misses


@given(st.lists(_near, min_size=1, max_size=3), st.lists(_near, min_size=1, max_size=8))
def test_skipping_windows_that_cannot_win_scores_the_same_as_matching_them_all(q_words, t_words):
    query, terms = " ".join(q_words), " ".join(t_words)
    assert phrase_score(query, terms) == _full_match_score(query, terms)


def test_the_sample_queries_score_as_before():
    for query, terms in [("kansas cty", "kansas city chiefs kc"), ("eagels", "philadelphia eagles phi"),
                         ("buffalo bils", "buffalo bills at miami dolphins"), ("chefs", "chelsea blues")]:
        assert phrase_score(query, terms) == _full_match_score(query, terms) > 0
