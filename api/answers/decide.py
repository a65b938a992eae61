"""Choose what a question names (from search-index hits) and which category answers it. Pure.

Rules, in order (docs/answers.md has the table):
1. a question asking for a prediction, a pick, advice, non-public or per-book data, or personal
   finance is out of scope (category 0, a polite refusal);
2. a league-aware question is refused with `needs_league` (leagues do not exist yet);
3. prices in the question: two or more with a margin cue (vig, hold, no-vig, fair ...) are
   no-vig and hold (3); a stake or a payout cue is a payout (2); one price is a conversion (1);
   two or more prices alone are no-vig and hold (3);
4. a team or game named: a market cue is the market's consensus (4), else the game (5);
5. a player named: injury cues are injury and news (8), else stat lines (7);
6. a day or week with a schedule cue is a slate (6);
7. a strategy cue is a strategy (10) when the registry holds one that matches;
8. otherwise the library: a question whose words match a reviewed entry is that entry (9), a
   law or tax entry needing a jurisdiction when none is given or named;
9. nothing matched: out of scope (0, off topic).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from api.answers import understand as u
from api.answers.categories import Category


@dataclass(frozen=True)
class Entity:
    id: str
    kind: str  # team, player, competition
    name: str
    competition: str | None
    team_id: str | None = None  # a player's team
    position: str | None = None
    score: float = 0.0
    phrase: str = ""  # the words of the question that named it
    weak: bool = False  # named by a first name alone ("Paris") or one misspelt word: needs a stats or injury cue
    others: tuple[str, ...] = ()  # other entities the same phrase named as closely (for the assumption)


@dataclass
class Named:
    teams: list[Entity] = field(default_factory=list)
    players: list[Entity] = field(default_factory=list)
    competition: str | None = None


# a phrase of one short word (two or three letters) names only what it spells exactly (KC, SF)
_SHORT = 3
# how close a phrase must be to a player's name, and to a team's name or terms
PLAYER_MIN = 0.8
TEAM_MIN = 0.8


def pick_entities(hits: Sequence[Mapping[str, Any]], phrases: Sequence[str]) -> Named:
    """The entities a question names: longest phrases first, each word used once; per phrase the
    closest entity (teams before players on a tie; a player's name must match, not his team's
    abbreviation). A phrase of several words that names something only approximately gives way
    when each of its words names something exactly ("packers eagles" is close to Crystal
    Palace's "palace eagles", but names the Packers and the Eagles)."""
    by_phrase: dict[str, list[Mapping[str, Any]]] = {}
    for hit in hits:
        by_phrase.setdefault(hit["phrase"], []).append(hit)
    used: set[str] = set()
    named = Named()
    seen: set[str] = set()
    for phrase in phrases:  # longest first
        words = set(phrase.split())
        if words & used:
            continue
        best = _candidates(phrase, by_phrase.get(phrase, ()))
        if not best:
            continue
        top_score, _, top = best[0]
        if top_score < 1.0 and len(words) > 1 and all(
                (c := _candidates(w, by_phrase.get(w, ()))) and c[0][0] >= 1.0 for w in words):
            continue
        if top["id"] in seen:
            used |= words
            continue
        ties = tuple(str(b[2]["name"]) for b in best[1:] if b[0] >= top_score - 1e-9 and b[2]["kind"] == top["kind"]
                     and b[2]["id"] != top["id"])
        entity = Entity(
            id=top["id"], kind=top["kind"], name=top["name"], competition=top["competition"],
            team_id=top.get("player_team_id") if hasattr(top, "get") else top["player_team_id"],
            position=top["player_position"], score=top_score, others=ties[:3],
            # a first name alone, or one word spelt only close to a surname ("worth", "Worthy"): kept
            # only when the question asks about a player (a stats or injury cue)
            phrase=phrase, weak=top["kind"] == "player" and (
                _first_name_only(phrase, top["name"]) or (" " not in phrase and top_score < 1.0)),
        )
        seen.add(entity.id)
        used |= words
        if entity.kind == "team":
            named.teams.append(entity)
        elif entity.kind == "player":
            named.players.append(entity)
        else:
            named.competition = entity.competition
    return named


def _candidates(phrase: str, hits: Sequence[Mapping[str, Any]]) -> list[tuple[float, int, Mapping[str, Any]]]:
    """(score, rank, hit) of what `phrase` may name, closest first (teams, then players, then
    competitions on a tie)."""
    best: list[tuple[float, int, Mapping[str, Any]]] = []
    for hit in hits:
        kind = hit["kind"]
        if kind == "player":
            score = float(hit["name_score"])
            if len(phrase) <= _SHORT or score < PLAYER_MIN or not _initials_match(phrase, hit["name"]):
                continue
            rank = 1
        elif kind == "team":
            score = float(hit["term_score"])
            if score < TEAM_MIN or (len(phrase) <= _SHORT and score < 1.0) or not _initials_match(
                    phrase, f"{hit['name']} {hit['terms']}"):
                continue
            rank = 0
        elif kind == "competition":
            score = float(hit["term_score"])
            if score < 0.8:
                continue
            rank = 2
        else:
            continue
        best.append((score, rank, hit))
    best.sort(key=lambda b: (-b[0], b[1]))
    return best


def _initials_match(phrase: str, name: str) -> bool:
    """Every word of the phrase starts like some word of the name: a slip inside a word is a
    typo ("mahomse"), a word found inside another word is not a name ("weather" in
    "Merriweather")."""
    starts = {w[0] for w in name.lower().replace("-", " ").split() if w}
    return all(w[0] in starts for w in phrase.split())


def _first_name_only(phrase: str, name: str) -> bool:
    parts = name.lower().split()
    return len(phrase.split()) == 1 and len(parts) > 1 and not any(w[0] == phrase[0] for w in parts[1:])


Decision = tuple[Category, str | None]  # the category, or a problem code (needs_league, needs_jurisdiction)


def decide(r: u.Reading, named: Named, *, library_hit: bool, law_or_tax: bool, jurisdiction: str | None,
           strategy_hit: bool = False) -> Decision:
    if r.league_aware:
        return Category.OUT_OF_SCOPE, "needs_league"
    if r.refusal is not None:
        return Category.OUT_OF_SCOPE, None
    n = len(r.prices)
    margin = r.cues(u.VIG_CUES) > 0
    team_or_game = bool(named.teams)
    market_cue = r.cues(u.MARKET_CUES) > 0 or bool(r.market_types)
    if n and not (team_or_game and market_cue and all(p.format == "decimal" for p in r.prices)):
        if n >= 2 and margin:
            return Category.NO_VIG_HOLD, None
        if r.stakes or r.cues(u.PAYOUT_CUES & {"pay", "payout", "pays", "paid", "return", "returns", "profit",
                                               "parlay", "parlays", "accumulator", "acca", "winnings", "collect",
                                               "payoff", "win", "make", "net"}):
            return Category.PAYOUT, None
        if n == 1:
            return Category.ODDS_CONVERSION, None
        return Category.NO_VIG_HOLD, None
    if team_or_game:
        if market_cue and not r.cues({"score", "scores", "final", "result", "won", "beat", "lost"}):
            return Category.MARKET, None
        return Category.GAME, None
    players = [p for p in named.players if not p.weak or r.cues(u.STATS_CUES | u.INJURY_CUES)]
    about_player = r.cues(u.STATS_CUES | u.INJURY_CUES) or not r.cues(u.REFERENCE_CUES | u.STRATEGY_GENERIC | u.VIG_CUES)
    law_or_tax = r.cues(u.LAW_CUES | u.TAX_CUES) > 0
    if players and about_player and not law_or_tax:
        named.players = players
        if r.cues(u.INJURY_CUES) and not r.cues(u.STATS_CUES - {"season", "did", "points", "line"}):
            return Category.INJURY_NEWS, None
        return Category.PLAYER_STATS, None
    has_day = bool(r.dates or r.weekday is not None or r.relative_day is not None or r.week is not None)
    if has_day and (r.cues(u.SLATE_CUES | u.GAME_CUES) or named.competition or r.competition):
        return Category.SLATE, None
    if strategy_hit:
        return Category.STRATEGY, None
    if library_hit:
        if law_or_tax and jurisdiction is None:
            return Category.REFERENCE, "needs_jurisdiction"
        return Category.REFERENCE, None
    if has_day and (named.competition or r.competition):
        return Category.SLATE, None
    return Category.OUT_OF_SCOPE, None
