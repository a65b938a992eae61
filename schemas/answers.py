"""The Answer record and the events of its stream. Pure.

The members `refusal`, `request_id` and `expires_at` are our additions to the published answer
record; clients ignore unknown members. Nothing here holds the question.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal

import msgspec


class Sentence(msgspec.Struct, kw_only=True):
    index: int  # from 0
    text: str
    citations: list[str]  # citation IDs (c1, c2, ...) the sentence uses


class Citation(msgspec.Struct, kw_only=True):
    citation_id: str  # c1, c2, ...
    kind: Literal["game", "market", "player", "reference", "strategy", "formula"]
    label: str
    source: str
    as_of: datetime
    ref: str | None  # the cited resource's ID (gm_, mkt_, plr_, ref_, stg_) or card@version
    url: str | None  # our own resource: /v1/games/{id}, /v1/formulas/{card}, ...
    reviewed_at: date | None  # reference and strategy entries: when last checked against sources
    formulas: list[str]  # formula cards (card@version) the cited values were computed with


class Figure(msgspec.Struct, kw_only=True):
    figure_id: str  # f1, f2, ...
    field: str  # what the number is: decimal_odds, no_vig_probability, hold, score_home, passing_yards, ...
    label: str
    value: float
    display: str
    unit: str  # decimal_odds, american_odds, probability, money, points, count, yards, ...
    as_of: datetime
    source: str
    citation_id: str
    topic: str | None  # the Wire topic that updates the value (live figures)
    selection_id: str | None  # the outcome a market figure belongs to (home, away, over, ...)
    edge_status: str | None  # always null: the engine serves no edges


class Assumption(msgspec.Struct, kw_only=True):
    """What the engine assumed to answer: which game a pair of teams meant, which season, which
    price format or devig method. Worded by the engine, never quoting the question."""

    kind: str  # game, team, player, season, date, price_format, devig_method, market, jurisdiction
    text: str


class Refusal(msgspec.Struct, kw_only=True):
    reason: Literal["prediction", "advice", "non_public", "personal_finance", "off_topic", "not_found"]
    message: str
    ask_instead: list[str]  # example questions that can be answered
    help_url: str  # the responsible-gambling help entry


class Answer(msgspec.Struct, kw_only=True, tag_field="object", tag="answer"):
    answer_id: str
    status: Literal["streaming", "completed"]
    category: int | None
    playbook: str | None
    tier: str
    supersedes: str | None
    summary: str
    sentences: list[Sentence]
    citations: list[Citation]
    figures: list[Figure]
    live_topics: list[str]
    rg_line: str
    assumptions: list[Assumption]
    links: dict[str, str]
    as_of: datetime
    source: str
    attribution: str | None
    created_at: datetime
    completed_at: datetime | None
    refusal: Refusal | None = None
    request_id: str | None = None
    expires_at: datetime | None = None  # until then GET /v1/answers/{answer_id} returns it


# ---- stream events -----------------------------------------------------------------


class Started(msgspec.Struct, kw_only=True):
    answer_id: str
    status: Literal["streaming"]
    category: int | None
    playbook: str | None
    tier: str
    supersedes: str | None
    live_topics: list[str]
    created_at: datetime


class CitationEvent(Citation, kw_only=True):
    answer_id: str


class Delta(msgspec.Struct, kw_only=True):
    answer_id: str
    index: int
    text: str
    citations: list[str]


class Completed(msgspec.Struct, kw_only=True):
    answer_id: str
    status: Literal["completed"]
    summary: str
    rg_line: str
    assumptions: list[Assumption]
    links: dict[str, str]
    sentence_count: int
    live_topics: list[str]
    as_of: datetime
    source: str
    attribution: str | None
    completed_at: datetime
    # ours: what the answer record carries beyond the events above, so a streamed answer is the whole answer
    figures: list[Figure]
    refusal: Refusal | None = None
    expires_at: datetime | None = None


def stream_events(answer: Answer) -> list[tuple[str, msgspec.Struct]]:
    """The events of the answer stream in order: started, each citation before the first sentence that
    uses it, one delta per sentence, completed. Ids are their positions from 1."""
    out: list[tuple[str, msgspec.Struct]] = [("answer.started", Started(
        answer_id=answer.answer_id, status="streaming", category=answer.category, playbook=answer.playbook,
        tier=answer.tier, supersedes=answer.supersedes, live_topics=answer.live_topics, created_at=answer.created_at,
    ))]
    by_id = {c.citation_id: c for c in answer.citations}
    sent: set[str] = set()
    for sentence in answer.sentences:
        for cid in sentence.citations:
            if cid not in sent and cid in by_id:
                sent.add(cid)
                out.append(("answer.citation", CitationEvent(answer_id=answer.answer_id,
                                                             **msgspec.structs.asdict(by_id[cid]))))
        out.append(("answer.delta", Delta(answer_id=answer.answer_id, index=sentence.index, text=sentence.text,
                                          citations=sentence.citations)))
    for citation in answer.citations:  # cited by a figure only: still before completed
        if citation.citation_id not in sent:
            out.append(("answer.citation", CitationEvent(answer_id=answer.answer_id,
                                                         **msgspec.structs.asdict(citation))))
    out.append(("answer.completed", Completed(
        answer_id=answer.answer_id, status="completed", summary=answer.summary, rg_line=answer.rg_line,
        assumptions=answer.assumptions, links=answer.links, sentence_count=len(answer.sentences),
        live_topics=answer.live_topics, as_of=answer.as_of, source=answer.source, attribution=answer.attribution,
        completed_at=answer.completed_at or answer.created_at, figures=answer.figures, refusal=answer.refusal,
        expires_at=answer.expires_at,
    )))
    return out
