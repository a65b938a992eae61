"""Search results: an entity by ID, kind and name, with a small per-kind context."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import msgspec

from api.resources.common import utc

# reference library kinds: `?kind=reference` selects all of them
REFERENCE_KINDS = ("term", "rule", "law", "tax", "policy", "guide", "help")
# the context members permitted on the API for library entries
_REFERENCE_CONTEXT = ("topic", "jurisdiction", "summary")

ContextValue = str | int | None


class SearchResult(msgspec.Struct, kw_only=True, tag_field="object", tag="search_result"):
    id: str
    kind: str  # competition, team, player, game, or a library kind (term, rule, ...)
    name: str
    context: dict[str, ContextValue]


def _iso(value: datetime | None) -> str | None:
    value = utc(value)
    return None if value is None else value.isoformat().replace("+00:00", "Z")


def _context(row: Mapping[str, Any]) -> dict[str, ContextValue]:
    """Members per kind, read from the entity's own read model: player position and team;
    game teams, week and kickoff; team competition and abbreviation; competition sport."""
    kind = row["kind"]
    if kind == "player":
        return {"position": row["player_position"], "team": row["player_team_name"], "team_id": row["player_team_id"]}
    if kind == "game":
        return {
            "home_team": row["game_home_name"], "away_team": row["game_away_name"], "season": row["game_season"],
            "week": row["game_week"], "kickoff_at": _iso(row["game_kickoff_at"]),
        }
    if kind == "team":
        return {"competition": row["team_competition"], "abbreviation": row["team_abbreviation"]}
    if kind == "competition":
        return {"sport": row["competition_sport"]}
    stored = row["context"] if isinstance(row["context"], Mapping) else {}
    return {k: str(stored[k]) for k in _REFERENCE_CONTEXT if stored.get(k) is not None}


def search_result(row: Mapping[str, Any]) -> SearchResult:
    return SearchResult(id=row["id"], kind=row["kind"], name=row["name"], context=_context(row))
