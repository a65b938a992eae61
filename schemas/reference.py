"""The sports and competitions the service knows (slugs are part of the API contract)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Sport:
    slug: str
    name: str


@dataclass(frozen=True)
class Competition:
    slug: str
    name: str
    sport: str
    timezone: str  # the zone its calendar (game days, weeks) is kept in
    odds_api_key: str | None  # The Odds API sport key


SPORTS: dict[str, Sport] = {
    s.slug: s for s in (Sport("american_football", "American Football"), Sport("soccer", "Soccer"))
}

COMPETITIONS: dict[str, Competition] = {
    c.slug: c
    for c in (
        Competition("nfl", "NFL", "american_football", "America/New_York", "americanfootball_nfl"),
        Competition("epl", "English Premier League", "soccer", "Europe/London", "soccer_epl"),
        Competition("serie_a", "Serie A", "soccer", "Europe/Rome", "soccer_italy_serie_a"),
    )
}

COMPETITION_BY_ODDS_API_KEY = {c.odds_api_key: c for c in COMPETITIONS.values() if c.odds_api_key}


# Sources that give no time for a game's result or a player's line of a game (nflverse's schedule
# file and weekly stats have no such column). Their events carry an ordering time (ingest rule:
# kickoff + 4 h, so a result sorts after the game's own reports), which is never served as the
# source's time: such provenance has `source_ts` null and the value is `as_of` when we read it.
UNTIMED_RESULT_SOURCES: frozenset[str] = frozenset({"nflverse"})


def untimed_result(source: str) -> bool:
    return source in UNTIMED_RESULT_SOURCES
