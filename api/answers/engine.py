"""Make one answer: understand (api.answers.understand, .decide), compute (.compute) and compose
(.compose). The question lives in this call's locals only: it is never logged, stored, put in
an error or sent to the database (only short phrases read out of it are looked up)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg

from api.answers import compose, compute, helplines, names
from api.answers import understand as u
from api.answers.categories import Category
from api.answers.decide import Named, decide, pick_entities
from api.answers.facts import Facts
from schemas.answers import Answer
from api.registry import read_registry
from api.kept import Rechecked
from api.queries.versions import table_version
from projections.search_terms import normalise

# a library entry answers a question when its title or an alias is in the question, or its
# relevance score (api.queries.library) is at least this (full-text rank plus trigram closeness)
LIBRARY_MIN_SCORE = 0.9


class Refused(Exception):
    """The question cannot be answered as asked: a catalog problem (needs_league,
    needs_jurisdiction) whose detail never quotes the question."""

    def __init__(self, code: str, detail: str, param: str | None) -> None:
        super().__init__(code)
        self.code, self.detail, self.param = code, detail, param


@dataclass(frozen=True)
class Ask:
    question: str
    state: str | None
    answer_id: str
    request_id: str | None
    now: datetime
    expires_at: datetime | None


def _library_match(rows: list, text: str, prefer: set[str] | None, law_or_tax: bool, strong_only: bool = False) -> list:
    """Entries that answer the question: named in it (title, alias or slug) or scoring high;
    law and tax entries only for a question about law or tax."""
    words = f" {normalise(text)} "
    strong, fair = [], []
    for row in rows:
        if prefer and row["kind"] not in prefer:
            continue
        if row["kind"] in ("law", "tax") and not law_or_tax:
            continue
        names = [row["title"], *(row["aliases"] or ()), row["slug"].replace("-", " ")]
        if any(f" {normalise(n)} " in words for n in names if normalise(n)):
            strong.append(row)
        elif row["score"] >= LIBRARY_MIN_SCORE:
            fair.append(row)
    return strong if strong_only else strong + fair


async def answer(conn: asyncpg.Connection, schema: str, ask: Ask) -> Answer:
    return (await answer_and_basis(conn, schema, ask))[0]


async def answer_and_basis(conn: asyncpg.Connection, schema: str, ask: Ask) -> tuple[Answer, dict | None]:
    """The answer and, when figures of it can still move, what re-derives it without the
    question (`api.answers.live`); None otherwise."""
    out: dict = {}
    made = await _answer(conn, schema, ask, out)
    return made, out.get("basis") if made.live_topics else None


async def _answer(conn: asyncpg.Connection, schema: str, ask: Ask, out: dict) -> Answer:
    r = u.read(ask.question)
    state = ask.state or (r.states[0] if r.states else None)
    rg = helplines.rg_line(state)
    help_url = helplines.HELP_ENTRY
    common = dict(answer_id=ask.answer_id, created_at=ask.now, rg_line=rg, request_id=ask.request_id,
                  expires_at=ask.expires_at)
    if r.league_aware:
        raise Refused("needs_league", "League-aware answers need a league, its owner's OAuth token with "
                                      "`read:league` and `league_id`; leagues are not served yet.", "league_id")
    if r.refusal is not None:
        return compose.refusal(r.refusal, help_url=help_url, **common)
    # prices without a market cue are answered by the maths alone: no names to look up
    maths_only = bool(r.prices) and not (r.cues(u.MARKET_CUES) or r.market_types)
    hits = (await names.index_for(conn, schema)).lookup(r.phrases) if r.phrases and not maths_only else []
    named = pick_entities(hits, r.phrases)
    if named.teams or named.players:
        # a name that is part of a library term or a strategy's name ("Kelly" in "Kelly criterion")
        # names the term, not a player
        covered = await _covered_words(conn, schema, ask.question)
        named.players = [p for p in named.players if not set(p.phrase.split()) <= covered]
        named.teams = [t for t in named.teams if not set(t.phrase.split()) <= covered]
    category, problem = decide(r, named, library_hit=False, law_or_tax=False, jurisdiction=state)
    library_rows: list = []
    strategy_found = None
    if category == Category.OUT_OF_SCOPE and problem is None:
        law_or_tax = bool(r.cues(u.LAW_CUES | u.TAX_CUES))
        jurisdiction = state or ("US" if r.cues(u.FEDERAL_CUES) else None)
        prefer = None
        if law_or_tax:
            prefer = {"law"} if r.cues(u.LAW_CUES) and not r.cues(u.TAX_CUES) else {"tax"} if r.cues(u.TAX_CUES) else None
        place = f"US-{state}" if state else ("US" if jurisdiction == "US" else None)
        library = await names.library_for(conn, schema)
        library_rows = library.named(ask.question, state, prefer, law_or_tax)
        if prefer and not library_rows and (state or jurisdiction):
            # a tax or law question naming no entry of its kind: the library's best of that kind there
            rows = await compute.library_hits(conn, schema, r.library_text or normalise(ask.question), place,
                                              kinds=tuple(prefer))
            library_rows = _library_match(rows, ask.question, prefer, law_or_tax)[:1] or rows[:1]
        if prefer and not library_rows:
            library_rows = library.named(ask.question, state, None, law_or_tax)
        if law_or_tax and state and r.cues(u.LAW_CUES) and not r.cues(u.TAX_CUES):
            entry = next((x for x in library.rows if x["slug"] == helplines.law_slug(state)), None)
            if entry is not None:
                library_rows = [entry, *[x for x in library_rows if x["id"] != entry["id"]]]
            else:  # the library reviews no law of this state: say so rather than answer for another
                return compose.refusal("not_found", help_url=help_url, category=Category.REFERENCE,
                                       looked_for=f"a reviewed law entry for {u.US_STATES[state].title()}", **common)
        strategy_found = await _strategy(conn, schema, ask.question, r) if not law_or_tax else None
        asks_strategy = bool(r.cues(u.STRATEGY_GENERIC | u.STRATEGY_ASKS))
        if strategy_found is not None and not asks_strategy and not library_rows:
            # a strategy named in passing ("minimum age"): an entry the library ranks answers first
            rows = await compute.library_hits(conn, schema, r.library_text or normalise(ask.question), place)
            library_rows = _library_match(rows, ask.question, prefer, law_or_tax, strong_only=True)
        if strategy_found is not None and library_rows and not asks_strategy:
            # named as a library term too ("kelly criterion"), and not asked about as a strategy
            strategy_found = None
        if len(library_rows) > 1 and not (law_or_tax and (state or jurisdiction is None)):
            # several entries named ("parlay", "postponed"): the one the library's relevance ranks first
            # (not for law or tax with no place: that is needs_jurisdiction whichever comes first)
            ranked = await compute.library_hits(conn, schema, r.library_text or normalise(ask.question), place)
            order = {row["id"]: i for i, row in enumerate(ranked)}
            library_rows = sorted(library_rows, key=lambda x: order.get(x["id"], len(order)))
        if not library_rows and strategy_found is None and _about_betting(r, ask.question):
            # nothing named, but a question about betting: the library's full-text relevance
            rows = await compute.library_hits(conn, schema, r.library_text or normalise(ask.question), place)
            library_rows = _library_match(rows, ask.question, prefer, law_or_tax) or (
                _library_match(rows, ask.question, None, law_or_tax) if prefer else [])
        category, problem = decide(r, named, library_hit=bool(library_rows), law_or_tax=law_or_tax,
                                   jurisdiction=jurisdiction, strategy_hit=strategy_found is not None)
    if problem == "needs_jurisdiction":
        raise Refused("needs_jurisdiction", "Law and tax differ by place: send `state` (two letters, a US state) "
                                            "or name the state in the question.", "state")
    if problem == "needs_league":
        raise Refused("needs_league", "League-aware answers need a league; leagues are not served yet.", "league_id")
    if category == Category.OUT_OF_SCOPE:
        return compose.refusal("off_topic", help_url=help_url, **common)
    try:
        if category == Category.STRATEGY and strategy_found is not None:
            facts = compute.strategy(*strategy_found)
        else:
            facts = await _compute(conn, schema, category, r, named, ask.now, library_rows)
    except compute.NotAnswerable as exc:
        return compose.refusal("not_found", help_url=help_url, looked_for=exc.looked_for, category=category,
                               **common)
    law = {x["slug"] for x in (await names.library_for(conn, schema)).rows} if state else set()
    out["basis"] = facts.basis
    return compose.compose(facts, help_links=helplines.help_links(state, law), **common)


_BETTING_WORDS = {"bet", "bets", "betting", "wager", "wagering", "gamble", "gambling", "sportsbook", "sportsbooks",
                  "bookmaker", "bookmakers", "bookie", "bookies", "book", "books", "odds", "punter", "casino",
                  "lottery", "fantasy", "dfs", "parlay", "prop", "props", "line", "lines", "payout", "winnings"}
_ASKING = ("what is", "what's", "whats", "what are", "what does", "how do", "how does", "how is", "how are", "why do",
           "why does", "explain", "define", "meaning of")


def _about_betting(r: u.Reading, question: str) -> bool:
    """Worth the library's full-text search: a question about betting terms, rules, law or tax
    (a joke or a recipe is not, and costs no search)."""
    text = normalise(question)
    return bool(r.cues(_BETTING_WORDS | u.REFERENCE_CUES | u.LAW_CUES | u.TAX_CUES | u.VIG_CUES)) or (
        text.startswith(_ASKING) and bool(r.library_text))


async def _covered_words(conn: asyncpg.Connection, schema: str, question: str) -> set[str]:
    """Words of the question inside a library entry's or strategy's name of two words or more."""
    library = await names.library_for(conn, schema)
    _, _, strategy_multiword, strategy_words = await _registry(conn, schema)
    stretches = names.word_stretches(normalise(question), max(library.longest_words, strategy_words))
    covered: set[str] = set()
    for stretch in stretches & library.multiword | stretches & strategy_multiword:
        covered |= set(stretch.split())
    return covered


# the registry with each strategy's names, per dataset schema, reloaded when `strategies` changed
_REGISTRIES: Rechecked[tuple] = Rechecked(names.RECHECK_SECONDS)


async def _registry(conn: asyncpg.Connection, schema: str) -> tuple:
    """The registry, each strategy's names, those of two words or more and the most words of one,
    reloaded when `strategies` changed (checked once a second)."""
    return await _REGISTRIES.get(schema, lambda: table_version(conn, schema, "strategies"),
                                 lambda: _read_registry(conn, schema))


async def _read_registry(conn: asyncpg.Connection, schema: str) -> tuple:
    registry = await read_registry(conn, schema)
    named = [(row, e, compute.strategy_names(e)) for row, e in registry.strategies]
    # names of two words or more (for _covered_words) and the most words of any name
    multiword = {n for _, _, ns in named for n in ns if " " in n}
    return registry, named, multiword, max((len(n.split()) for _, _, ns in named for n in ns), default=0)


async def _strategy(conn: asyncpg.Connection, schema: str, question: str, r: u.Reading):
    """The registry strategy the question names (name, alias or slug in its words; the longest
    name wins), with the alternative it points to; None when it names none."""
    registry, named, _, most_words = await _registry(conn, schema)
    stretches = names.word_stretches(normalise(question), most_words)
    best, best_len = None, 0
    for row, e, strategy_names in named:
        for name in strategy_names:
            if len(name) > best_len and name in stretches:
                best, best_len = (row, e), len(name)
    if best is None:
        return None
    alternative = registry.find(best[1].alternative.strategy) if best[1].alternative is not None else None
    return best, alternative


async def _compute(conn: asyncpg.Connection, schema: str, category: Category, r: u.Reading, named: Named,
                   now: datetime, library_rows: list) -> Facts:
    if category == Category.ODDS_CONVERSION:
        return compute.conversion(r, now)
    if category == Category.PAYOUT:
        return compute.payout(r, now)
    if category == Category.NO_VIG_HOLD:
        return compute.no_vig(r, now)
    if category == Category.MARKET:
        return await compute.market(conn, schema, r, named, now)
    if category == Category.GAME:
        return await compute.game(conn, schema, r, named, now)
    if category == Category.SLATE:
        return await compute.slate(conn, schema, r, named, now)
    if category == Category.PLAYER_STATS:
        return await compute.player_stats(conn, schema, r, named, now)
    if category == Category.INJURY_NEWS:
        return await compute.injury_news(conn, schema, r, named, now)
    if category == Category.REFERENCE:
        return compute.reference(library_rows[0], library_rows[1:2])
    raise compute.NotAnswerable("an answer of this kind")
