"""List envelopes (`object` = `list`, `data`, `has_more`, `next_cursor`) per resource,
so each route's OpenAPI document names the item type; and the slate."""

from __future__ import annotations

from datetime import date, datetime

import msgspec

from api.resources.common import Meta
from api.resources.games import Game, SlateGame
from api.resources.library import ReferenceEntry
from api.resources.markets import Market
from api.resources.reference import Competition, Sport
from api.resources.search import SearchResult


class _List(msgspec.Struct, kw_only=True, tag_field="object", tag="list"):
    has_more: bool
    next_cursor: str | None  # opaque; send it back with the same filters for the next page


class SportList(_List, kw_only=True):
    data: list[Sport]


class CompetitionList(_List, kw_only=True):
    data: list[Competition]


class GameList(_List, kw_only=True):
    data: list[Game]


class MarketList(_List, kw_only=True):
    data: list[Market]


class SearchResultList(_List, kw_only=True):
    data: list[SearchResult]


class ReferenceEntryList(_List, kw_only=True):
    data: list[ReferenceEntry]


class Slate(Meta, kw_only=True, tag_field="object", tag="slate"):
    """One local day of games across sports, in kickoff order."""

    date: date  # the local day
    timezone: str  # IANA zone the day is local to
    starts_at: datetime  # UTC, inclusive
    ends_at: datetime  # UTC, exclusive; 23 or 25 hours after starts_at on a clock-change day
    game_count: int  # every game of the day matching the filters, the same on every page
    data: list[SlateGame]
    has_more: bool
    next_cursor: str | None
