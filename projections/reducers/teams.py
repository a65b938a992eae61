"""Teams: identity (newest value per field), every alias any source used, IDs per source."""

from __future__ import annotations

import msgspec

from projections.reducers.common import earliest, merge_fields, origin_of, union_known_by
from projections.state import TeamState
from schemas.events import TeamRegistered


def reduce_team(state: TeamState | None, e: TeamRegistered) -> tuple[TeamState, list]:
    team = state if state is not None else TeamState(e.team_id)
    origin = origin_of(e)
    fields = merge_fields(
        team.fields,
        {"name": e.name, "sport": e.sport, "competition": e.competition, "abbreviation": e.abbreviation},
        origin.stamp,
    )
    aliases = team.aliases
    if not set(e.aliases) <= set(aliases):
        aliases = tuple(sorted(set(aliases) | set(e.aliases)))
    first = earliest(team.origin, origin)
    known_by = union_known_by(team.known_by, e.known_by)
    as_of = max(team.as_of, origin.source_ts)
    if (fields is team.fields and aliases is team.aliases and first is team.origin
            and known_by is team.known_by and as_of == team.as_of):
        return team, []
    return msgspec.structs.replace(
        team, fields=fields, aliases=aliases, origin=first, known_by=known_by, as_of=as_of
    ), []
