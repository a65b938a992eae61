"""What compute hands to compose: sources (citations before numbering), values (figures before
numbering) and the words of the records (names, dates, statuses) the templates need. Pure."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from api.answers.categories import Category
from schemas.answers import Assumption


@dataclass(frozen=True)
class Source:
    """A citation before it is numbered; `key` is stable within one answer (e.g. `game:gm_…`)."""

    key: str
    kind: str  # game, market, player, reference, strategy, formula
    label: str
    source: str
    as_of: datetime
    ref: str | None
    url: str | None
    reviewed_at: date | None = None
    formulas: tuple[str, ...] = ()


@dataclass(frozen=True)
class Value:
    """A figure before it is numbered; templates name it by `key`."""

    key: str
    field: str
    label: str
    value: float
    display: str
    unit: str
    as_of: datetime
    source: str
    cite: str  # the Source key
    topic: str | None = None
    selection_id: str | None = None


@dataclass
class Facts:
    category: Category
    sources: dict[str, Source] = field(default_factory=dict)
    values: dict[str, Value] = field(default_factory=dict)
    words: dict[str, Any] = field(default_factory=dict)  # names, dates, statuses for the templates
    assumptions: list[Assumption] = field(default_factory=list)
    links: dict[str, str] = field(default_factory=dict)
    live_topics: list[str] = field(default_factory=list)
    refusal: str | None = None  # a refusal reason (schemas.answers.Refusal)
    wagering: bool = False
    # what re-derives the answer without its question (the game read and the market types and
    # devig method asked for; api.answers.live), for the categories whose figures move
    basis: dict[str, Any] | None = None

    def cite(self, source: Source) -> str:
        self.sources.setdefault(source.key, source)
        return source.key

    def add(self, value: Value) -> Value:
        self.values[value.key] = value
        return value

    def assume(self, kind: str, text: str) -> None:
        self.assumptions.append(Assumption(kind=kind, text=text))

    def topic(self, topic: str) -> None:
        if topic not in self.live_topics:
            self.live_topics.append(topic)
