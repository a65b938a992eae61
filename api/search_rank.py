"""How a search query ranks the entities it found (pure: no I/O).

Candidates come from the database (pg_trgm word similarity, or the query as a whole phrase of an
entity's terms); this orders them as a person typing expects:

1. the query is a whole phrase of the entity's names (an exact name, nickname or alias:
   "bucs", "niners", "patrick mahomes") before anything else, then the same words in another
   order ("jefferson justin");
2. then a name that starts with what was typed ("mahom", "kansas ci");
3. then the closest spelling ("chefs" is Chiefs, not Chelsea), by the similarity of the query to
   the best run of as many consecutive words of the entity's terms (difflib's ratio);
4. ties: competitions, teams, players, games, library entries ("dallas" is the Cowboys before
   a player named Dallas), then the closer whole name, then by name.

A query naming two sides ("chiefs vs ravens", "bills @ rams", "arsenal v spurs") is a game
search: a game ranks by its weaker side's match, so both teams must be in it.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import Iterable, Sequence

from projections.search_terms import normalise

EXACT = 1.0
REORDERED = 0.99  # the same words in another order ("jefferson justin")
PREFIX = 0.9  # plus up to 0.09 for how much of the word was typed
FUZZY = 0.9  # times the spelling similarity (below any prefix of a real word)
_SIDES = re.compile(r"\s+(?:vs\.?|versus|v\.?|at)\s+|\s*[@/]\s*|\s+-\s+", re.IGNORECASE)
KIND_RANK = {"competition": 0, "team": 1, "player": 2, "game": 3}


def sides(q: str) -> tuple[str, str] | None:
    """The two teams of a matchup query, normalised, or None."""
    parts = [normalise(p) for p in _SIDES.split(q.strip(), maxsplit=1)]
    if len(parts) == 2 and all(parts):
        return parts[0], parts[1]
    return None


def _windows(words: Sequence[str], n: int) -> Iterable[str]:
    for size in {max(1, n - 1), n, n + 1}:
        for i in range(0, max(0, len(words) - size) + 1):
            yield " ".join(words[i:i + size])


def phrase_score(query: str, terms: str) -> float:
    """How well a normalised query matches a normalised terms text (0..1, 1 = a whole phrase)."""
    if not query:
        return 0.0
    padded = f" {terms} "
    if f" {query} " in padded:
        return EXACT
    q_words = query.split()
    t_words = terms.split()
    q_sorted = sorted(q_words)
    best = 0.0
    for window in _windows(t_words, len(q_words)):
        if len(q_words) > 1 and sorted(window.split()) == q_sorted:
            return REORDERED
        if window.startswith(query):
            score = PREFIX + 0.09 * len(query) / len(window)
        else:
            # the full match was most of a search request's time: a window that cannot beat the
            # best so far is skipped first by upper bounds of its ratio (difflib's real_quick_ratio
            # from the lengths alone, then quick_ratio), so the score comes out the same
            length = len(query) + len(window)
            if FUZZY * (2.0 * min(len(query), len(window)) / length) <= best:
                continue
            matcher = SequenceMatcher(None, query, window, autojunk=False)
            if FUZZY * matcher.quick_ratio() <= best:
                continue
            score = FUZZY * matcher.ratio()
        if score > best:
            best = score
    return best


def rank_key(q: str, matchup: tuple[str, str] | None, kind: str, name: str, terms: str, entity_id: str) -> tuple:
    """The sort key of one candidate (ascending = better first)."""
    query = normalise(q)
    if matchup is not None and kind == "game":
        score = min(phrase_score(matchup[0], terms), phrase_score(matchup[1], terms))
        score += 1.0  # a game naming both sides before anything matching the words alone
    else:
        score = phrase_score(query, terms)
    closeness = SequenceMatcher(None, query, normalise(name), autojunk=False).ratio()
    # equally good matches: a team before a player who shares the word ("dallas", "washington"),
    # then the closer whole name
    return (-score, KIND_RANK.get(kind, 4), -closeness, name, entity_id)


__all__ = ["phrase_score", "rank_key", "sides"]
