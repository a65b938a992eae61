"""Compose an answer from computed facts: short sentences from fixed templates, each citing the
sources of what it says (c1, c2, ... numbered in order of first use), figures numbered f1, f2,
..., a summary, links and the cost line. Pure: every number in a sentence is the display of a
figure the engine computed; no sentence quotes the question.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable

from api.answers import categories
from api.answers.categories import Category
from api.answers.facts import Facts
from schemas.answers import Answer, Citation, Figure, Refusal, Sentence
from api.resources.common import ENGINE_SOURCE, attribution_for

Line = tuple[str, list[str]]  # a sentence and the source keys it cites

REFUSAL_MESSAGES = {
    "prediction": "I can't predict results or pick bets: answers come from public data and the engine's maths only.",
    "advice": "I can't give betting advice or tell you what or how much to bet.",
    "non_public": "I can't answer that from public data: the engine serves consensus values, never a single "
                  "book's prices, betting splits or private information.",
    "personal_finance": "I can't help with personal financial decisions; answers cover sports data and betting maths.",
    "off_topic": "I can only answer questions about sports data and betting maths from public data.",
    "not_found": "I couldn't find that in the data the engine holds.",
}
OFFER = "You can ask, for example: "


def _v(f: Facts, key: str) -> str:
    return f.values[key].display


def _c(f: Facts, key: str) -> str:
    return f.values[key].cite


# ---- templates per category --------------------------------------------------------------------


def _conversion(f: Facts) -> tuple[list[Line], str]:
    w = f.words
    cite = _c(f, "decimal")
    target = w.get("target")
    lines: list[Line] = [
        (f"{w['input']} is {_v(f, 'decimal')} in decimal odds, {_v(f, 'american')} in American odds and "
         f"{_v(f, 'fractional')} in fractional odds.", [cite]),
        (f"Its implied probability is {_v(f, 'implied')}, margin included.", [cite]),
    ]
    main = {"decimal": "decimal", "american": "american", "fractional": "fractional", "implied": "implied"}.get(
        target or "", "decimal" if w["input_format"] != "decimal" else "american")
    names = {"decimal": "decimal odds", "american": "American odds", "fractional": "fractional odds",
             "implied": "an implied probability"}
    summary = f"{w['input']} is {_v(f, main)} as {names[main]}."
    return lines, summary


def _payout(f: Facts) -> tuple[list[Line], str]:
    w = f.words
    cite = _c(f, "payout")
    if w["parlay"]:
        legs = ", ".join(w["legs"])
        lines: list[Line] = [(f"A {w['stake']} parlay of {legs} has decimal odds of {_v(f, 'decimal')}"
                              + (f" ({_v(f, 'american')})" if "american" in f.values else "") + ".", [cite])]
        if w["removed"]:
            lines.append((f"{len(w['removed'])} leg{'s' if len(w['removed']) != 1 else ''} pushed or void and "
                          f"drop{'s' if len(w['removed']) == 1 else ''} out; {w['counted']} leg"
                          f"{'s' if w['counted'] != 1 else ''} count.", [cite]))
        lines.append((f"If every leg wins it pays {_v(f, 'payout')}, stake included: a profit of {_v(f, 'profit')}.",
                      [cite]))
        lines.append((f"The implied probability of every leg winning is {_v(f, 'implied')}.", [cite]))
        return lines, f"A {w['stake']} parlay pays {_v(f, 'payout')} if every leg wins."
    lines = [
        (f"A {w['stake']} bet at {w['price']} (decimal {_v(f, 'decimal')}) pays {_v(f, 'payout')} if it wins, "
         f"stake included: a profit of {_v(f, 'profit')}.", [cite]),
        (f"It breaks even if it wins {_v(f, 'break_even')} of the time.", [cite]),
    ]
    return lines, f"A {w['stake']} bet at {w['price']} pays {_v(f, 'payout')} ({_v(f, 'profit')} profit)."


def _no_vig(f: Facts) -> tuple[list[Line], str]:
    w = f.words
    cite = _c(f, "hold")
    prices = " / ".join(w["prices"])
    lines: list[Line] = [(f"The prices {prices} carry a hold of {_v(f, 'hold')} (an overround of "
                          f"{_v(f, 'overround')}).", [cite])]
    parts = []
    for i, price in enumerate(w["prices"]):
        if f"p{i}" in f.values:
            fair = f" (fair odds {_v(f, f'fair{i}')})" if f"fair{i}" in f.values else ""
            parts.append(f"{price} {_v(f, f'p{i}')}{fair}")
    lines.append((f"With the margin removed ({w['method']} method), the probabilities are: {'; '.join(parts)}.",
                  [cite]))
    if not w["in_range"]:
        lines.append(("The method put a probability outside 0 to 1 for these prices; another method may suit them "
                      "better.", [cite]))
    return lines, f"Hold {_v(f, 'hold')}; no-vig probabilities {', '.join(parts)}."


def _status_words(w: dict[str, Any]) -> str:
    return {"scheduled": "is scheduled", "live": "is in play", "final": "is final", "postponed": "was postponed",
            "cancelled": "was cancelled", "suspended": "is suspended",
            "result_unknown": "has no result in the data"}.get(w["status"], f"is {w['status']}")


def _when(w: dict[str, Any]) -> str:
    if w["kickoff"] is not None:
        return f"{w['kickoff']:%A %B} {w['kickoff'].day}, {w['kickoff'].year} at {w['kickoff']:%H:%M} UTC"
    return f"{w['day']:%A %B} {w['day'].day}, {w['day'].year}"


def _game(f: Facts) -> tuple[list[Line], str]:
    w = f.words
    cite = f"game:{w['game_id']}"
    week = f" (week {w['week']} of the {w['season']} season)" if w["week"] else ""
    lines: list[Line] = [(f"{w['away']} at {w['home']} kicks off {_when(w)}{week}"
                          + (f" at {w['venue']}" if w["venue"] else "") + ".", [cite])]
    if "score_home" in f.values:
        h, a = f.values["score_home"].value, f.values["score_away"].value
        if w["status"] == "final":
            if h == a:
                result = f"It ended in a tie, {w['home']} {_v(f, 'score_home')}, {w['away']} {_v(f, 'score_away')}."
            else:
                win, lose = (("home", "away") if h > a else ("away", "home"))
                result = (f"The game is final: {w[win]} {_v(f, 'score_' + win)}, {w[lose]} {_v(f, 'score_' + lose)}.")
            lines.append((result, [cite]))
        else:
            clock = f" ({w['period']}{', ' + w['clock'] if w['clock'] else ''})" if w["period"] else ""
            lines.append((f"The game {_status_words(w)}{clock}: {w['home']} {_v(f, 'score_home')}, "
                          f"{w['away']} {_v(f, 'score_away')}.", [cite]))
        summary = lines[-1][0]
    else:
        lines.append((f"The game {_status_words(w)}; there is no score yet.", [cite]))
        summary = f"{w['away']} at {w['home']} {_status_words(w)}, {_when(w)}."
    return lines, summary


def _market(f: Facts) -> tuple[list[Line], str]:
    w = f.words
    game_cite = w["game_cite"]
    lines: list[Line] = []
    summary_parts = []
    first = True
    for m in w["markets"]:
        cite = m["cite"]
        prices = []
        probs = []
        for o in m["outcomes"]:
            if "price" in o:
                prices.append(f"{o['name']} {_v(f, o['price'])}")
            if "p" in o:
                probs.append(f"{o['name']} {_v(f, o['p'])}")
        if not prices:
            continue
        lead = f"For {w['away']} at {w['home']}, the" if first else "The"
        cites = [game_cite, cite] if first else [cite]
        if m["basis"] == "published_line":
            what = f"published {m['kind']}"
        else:
            what = f"consensus {m['kind']} across {m['books']} book{'s' if m['books'] != 1 else ''}"
        lines.append((f"{lead} {what} is {', '.join(prices)}.", cites))
        first = False
        tail = f" with a hold of {_v(f, m['hold'])}" if "hold" in m else ""
        if probs:
            lines.append((f"No-vig probabilities: {', '.join(probs)}{tail}.", [cite]))
        elif tail:
            lines.append((f"The line carries a hold of {_v(f, m['hold'])}.", [cite]))
        summary_parts.append(f"{m['kind']} {', '.join(prices)}")
    if not lines:
        lines.append((f"No consensus prices are held for {w['away']} at {w['home']}.", [game_cite]))
    summary = f"{w['away']} at {w['home']}: consensus " + "; ".join(summary_parts) + "." if summary_parts else lines[0][0]
    return lines, summary


def _slate(f: Facts) -> tuple[list[Line], str]:
    w = f.words
    games = w["games"]
    n = w["count"]
    lines: list[Line] = [(f"{n} game{'s' if n != 1 else ''} in {w['scope']}.", [g["cite"] for g in games[:1]])]
    for g in games[:16]:
        if "h" in g and g["status"] == "final":
            text = f"{g['label']}: final, {g['home']} {_v(f, g['h'])}, {g['away']} {_v(f, g['a'])}."
        elif "h" in g:
            text = f"{g['label']}: {g['status']}, {g['home']} {_v(f, g['h'])}, {g['away']} {_v(f, g['a'])}."
        elif g["kickoff"] is not None:
            text = f"{g['label']}: {g['status']}, kickoff {g['kickoff']:%a %H:%M} UTC."
        else:
            text = f"{g['label']}: {g['status']}."
        lines.append((text, [g["cite"]]))
    if len(games) > 16:
        lines.append((f"And {len(games) - 16} more; the slate route lists them all.", []))
    return lines, f"{n} game{'s' if n != 1 else ''} in {w['scope']}."


def _player_stats(f: Facts) -> tuple[list[Line], str]:
    w = f.words
    parts = [f"{_v(f, key)} {words}" for words, key in w["items"]]
    cite = f.values[w["items"][0][1]].cite
    who = w["player"] + (f" ({w['position']}, {w['team']})" if w["position"] and w["team"] else "")
    if w["scope"] == "season":
        head = f"In the {w['season']} season, {who} has"
    else:
        head = f"In {w['game']}, {who} had" if w["game"] else f"In his latest game, {who} had"
    text = f"{head} {', '.join(parts[:-1]) + ' and ' + parts[-1] if len(parts) > 1 else parts[0]}."
    return [(text, [cite])], text


def _injury(f: Facts) -> tuple[list[Line], str]:
    w = f.words
    cite = w["cite"]
    who = w["player"] + (f" ({w['position']}, {w['team']})" if w["position"] and w["team"] else "")
    lines: list[Line] = []
    inj = w.get("injury")
    if inj:
        when = f" for week {inj['week']} of {inj['season']}" if inj["week"] else ""
        detail = f" ({inj['detail']})" if inj["detail"] else ""
        if inj["status"]:
            lines.append((f"{who} is listed {inj['status']}{detail} on the latest injury report{when}.", [cite]))
        else:
            lines.append((f"{who} is on the latest injury report{when}{detail}, with no game designation.", [cite]))
        if inj["practice"]:
            lines.append((f"Practice participation: {inj['practice']}.", [cite]))
    else:
        lines.append((f"{who} is on no current injury report in the data.", [cite]))
    for a in w["availability"]:
        lines.append((f"Availability: {a['status']}" + (f" (week {a['week']})" if a["week"] else "") + ".", [cite]))
    for n in w["news"]:
        day = f"{n['published_at']:%Y-%m-%d}: " if n["published_at"] else ""
        lines.append((f"News, {day}{n['headline'].rstrip('.')}.", [cite]))
    return lines, lines[0][0]


def _reference(f: Facts) -> tuple[list[Line], str]:
    w = f.words
    cite = w["cite"]
    lines: list[Line] = [(f"{w['title']}: {w['summary'].strip()}", [cite])]
    for title, summary, rc in w["related"]:
        lines.append((f"See also {title}: {summary.strip()}", [rc]))
    if w["kind"] in ("law", "tax"):
        lines.append(("This is information from the reviewed library entry, not legal or tax advice.", [cite]))
    if w["stale"]:
        lines.append(("The entry is due for review; check its sources for changes.", [cite]))
    return lines, f"{w['title']}: {w['summary'].strip()}"


def _strategy(f: Facts) -> tuple[list[Line], str]:
    w = f.words
    lines: list[Line] = list(w.get("lines", []))
    return lines, lines[0][0] if lines else ""


TEMPLATES: dict[Category, Callable[[Facts], tuple[list[Line], str]]] = {
    Category.ODDS_CONVERSION: _conversion,
    Category.PAYOUT: _payout,
    Category.NO_VIG_HOLD: _no_vig,
    Category.MARKET: _market,
    Category.GAME: _game,
    Category.SLATE: _slate,
    Category.PLAYER_STATS: _player_stats,
    Category.INJURY_NEWS: _injury,
    Category.REFERENCE: _reference,
    Category.STRATEGY: _strategy,
}


# ---- the answer -----------------------------------------------------------------------------


def compose(f: Facts, *, answer_id: str, created_at: datetime, rg_line: str, help_links: dict[str, str],
            request_id: str | None, expires_at: datetime | None, supersedes: str | None = None) -> Answer:
    info = categories.info(f.category)
    lines, summary = TEMPLATES[f.category](f)
    numbers: dict[str, str] = {}

    def number(key: str) -> str:
        if key not in numbers:
            numbers[key] = f"c{len(numbers) + 1}"
        return numbers[key]

    sentences = [Sentence(index=i, text=text, citations=[number(k) for k in keys if k in f.sources])
                 for i, (text, keys) in enumerate(lines)]
    figures = [
        Figure(figure_id=f"f{i + 1}", field=v.field, label=v.label, value=v.value, display=v.display, unit=v.unit,
               as_of=v.as_of, source=v.source, citation_id=number(v.cite), topic=v.topic, selection_id=v.selection_id,
               edge_status=None)
        for i, v in enumerate(f.values.values())
    ]
    order = sorted(numbers.items(), key=lambda kv: int(kv[1][1:]))
    citations = [_citation(f, key, cid) for key, cid in order]
    sources = sorted({c.source for c in citations})
    as_of = max([c.as_of for c in citations] + [v.as_of for v in f.values.values()], default=created_at)
    links = {**f.links, "self": f"/v1/answers/{answer_id}"}
    if f.wagering or info.wagering:
        links.update(help_links)
    return Answer(
        answer_id=answer_id, status="completed", category=int(f.category), playbook=info.playbook, tier=info.tier,
        supersedes=supersedes, summary=summary, sentences=sentences, citations=citations, figures=figures,
        live_topics=list(f.live_topics), rg_line=rg_line, assumptions=list(f.assumptions), links=links, as_of=as_of,
        source=sources[0] if len(sources) == 1 else ENGINE_SOURCE,
        attribution=attribution_for(sources), created_at=created_at, completed_at=created_at, refusal=None,
        request_id=request_id, expires_at=expires_at,
    )


def _citation(f: Facts, key: str, cid: str) -> Citation:
    s = f.sources[key]
    return Citation(citation_id=cid, kind=s.kind, label=s.label, source=s.source, as_of=s.as_of, ref=s.ref,  # type: ignore[arg-type]
                    url=s.url, reviewed_at=s.reviewed_at, formulas=list(s.formulas))


def refusal(reason: str, *, answer_id: str, created_at: datetime, rg_line: str, help_url: str,
            request_id: str | None, expires_at: datetime | None, looked_for: str | None = None,
            category: Category = Category.OUT_OF_SCOPE) -> Answer:
    """A polite refusal: no figures, what can be asked instead, the responsible-gambling help.
    An in-scope question the data cannot answer (`not_found`) keeps its category."""
    info = categories.info(category)
    message = REFUSAL_MESSAGES[reason]
    if looked_for:
        message = f"I couldn't find {looked_for} in the data the engine holds."
    offer = OFFER + "; ".join(f'"{q}"' for q in categories.ASK_INSTEAD) + "."
    sentences = [Sentence(index=0, text=message, citations=[]), Sentence(index=1, text=offer, citations=[])]
    return Answer(
        answer_id=answer_id, status="completed", category=int(category), playbook=info.playbook,
        tier="refusal", supersedes=None, summary=message, sentences=sentences, citations=[], figures=[], live_topics=[],
        rg_line=rg_line, assumptions=[],
        links={"self": f"/v1/answers/{answer_id}", "responsible_gambling": help_url},
        as_of=created_at, source=ENGINE_SOURCE, attribution=None, created_at=created_at, completed_at=created_at,
        refusal=Refusal(reason=reason, message=message, ask_instead=list(categories.ASK_INSTEAD),  # type: ignore[arg-type]
                        help_url=help_url),
        request_id=request_id, expires_at=expires_at,
    )
