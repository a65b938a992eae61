"""Identity resolution, the pure part: which `tm_`, `plr_` and natural `gm_` a source record is.

Teams and players have natural IDs only (the alias data decides the team key). A game's
natural ID is its competition, teams and local kickoff day; the registry (ingest/registry.py)
may map a source's game to an earlier `gm_` of the same real game instead (kickoff window).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo

from ingest.memo import remember
from ingest.team_aliases import NFL_BY_KEY, nfl_team_key, soccer_team_key
from schemas import natural_keys
from schemas.bounds import NAME_MAX, clean_text
from schemas.reference import COMPETITIONS

# an Odds API event matches a known game of the same competition and teams kicking off this close
MATCH_WINDOW = timedelta(hours=36)


class UnknownTeam(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Team:
    team_id: str
    competition: str
    key: str  # natural key: franchise abbreviation (NFL) or normalised club name (soccer)
    name: str  # display name
    abbreviation: str | None
    aliases: tuple[str, ...]


def zone(competition: str) -> ZoneInfo:
    return ZoneInfo(COMPETITIONS[competition].timezone)


def nfl_team(name_or_abbreviation: str) -> Team:
    key = nfl_team_key(clean_text(name_or_abbreviation))
    if key is None:
        raise UnknownTeam(f"unknown NFL team {name_or_abbreviation[:NAME_MAX]!r}")
    f = NFL_BY_KEY[key]
    aliases = tuple(sorted({*f.former_names, *f.other_abbreviations}))
    return Team(natural_keys.team_id("nfl", key), "nfl", key, f.name, key, aliases)


def soccer_team(competition: str, name: str) -> Team:
    """A club as a source names it: the name stored clean (NFC, no control or format
    characters such as bidi overrides and zero-width spaces), so it matches itself."""
    name = clean_text(name)
    if len(name) > NAME_MAX:
        raise UnknownTeam(f"team name of {len(name)} characters (at most {NAME_MAX})")
    key = soccer_team_key(competition, name)
    if not key:
        raise UnknownTeam(f"empty team name {name!r}")
    return Team(natural_keys.team_id(competition, key), competition, key, name, None, ())


def team(competition: str, name: str) -> Team:
    """The team a source names (`UnknownTeam` if none). A file names the same few dozen teams
    on every record: a found team is kept per (competition, name as written), bounded like
    ingest's other memos; a name not found is looked up again (and refused again) each time."""
    key = (competition, name)
    found = _TEAMS.get(key)
    if found is None:
        found = nfl_team(name) if competition == "nfl" else soccer_team(competition, name)
        remember(_TEAMS, key, found, _TEAMS_MAX)
    return found


_TEAMS: dict[tuple[str, str], Team] = {}
_TEAMS_MAX = 4_096


def local_day(competition: str, kickoff_at: datetime) -> date:
    return kickoff_at.astimezone(zone(competition)).date()


def local_kickoff(competition: str, day: date, clock: time | None) -> datetime | None:
    """A local date and wall-clock time in the competition's zone, as UTC."""
    if clock is None:
        return None
    return datetime.combine(day, clock, zone(competition)).astimezone(timezone.utc)


def kickoff_sort(competition: str, kickoff_at: datetime | None, kickoff_date: date | None) -> datetime:
    """The instant used to order and match games: kickoff, or the start of the local day."""
    if kickoff_at is not None:
        return kickoff_at
    assert kickoff_date is not None, "a game needs a kickoff time or date"
    return datetime.combine(kickoff_date, time(0), zone(competition)).astimezone(timezone.utc)


def natural_game_id(
    competition: str, home_team_id: str, away_team_id: str, kickoff_at: datetime | None, kickoff_date: date | None
) -> str:
    day = kickoff_date if kickoff_at is None else local_day(competition, kickoff_at)
    assert day is not None
    return natural_keys.game_id(competition, home_team_id, away_team_id, day)


def season_label(competition: str, day: date) -> str:
    """The season a game day belongs to: NFL seasons run Sep-Feb and carry their first year;
    European leagues run Aug-May and are labelled "2024-25"."""
    if competition == "nfl":
        return str(day.year if day.month >= 3 else day.year - 1)
    first = day.year if day.month >= 7 else day.year - 1
    return f"{first}-{(first + 1) % 100:02d}"


def player_id(competition: str, league_id: str) -> str:
    return natural_keys.player_id(competition, league_id)
