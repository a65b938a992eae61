"""The natural key of every entity, and so its ID: one rule, used by ingest and projections.

IDs never depend on which source was read first or on which machine: they hash these keys.
"""

from __future__ import annotations

from datetime import date

from domain.ids import natural_id


def sport_id(sport_slug: str) -> str:
    return natural_id("sport", sport_slug)


def competition_id(competition_slug: str) -> str:
    return natural_id("competition", competition_slug)


def season_id(competition_slug: str, label: str) -> str:
    return natural_id("season", competition_slug, label)


def team_id(competition_slug: str, team_key: str) -> str:
    """`team_key`: the team's canonical key in its competition (NFL: the franchise's current
    nflverse abbreviation, such as KC or LV; soccer: the normalised club name)."""
    return natural_id("team", competition_slug, team_key)


def player_id(competition_slug: str, player_key: str) -> str:
    """`player_key`: the player's stable league ID (NFL: the gsis ID, such as 00-0033873)."""
    return natural_id("player", competition_slug, player_key)


def game_id(competition_slug: str, home_team_id: str, away_team_id: str, local_day: date) -> str:
    """A game is its competition, its two teams and its day in the competition's time zone.

    Sources that disagree on the exact kickoff still agree on this; a game rescheduled to
    another day keeps its first ID (identity resolution maps the source's own ID to it)."""
    return natural_id("game", competition_slug, home_team_id, away_team_id, local_day.isoformat())


def market_id(game_id: str, kind: str, market_type: str, period: str, participant_id: str | None) -> str:
    """A market is (game, kind, type, period, participant); its points are lines within it."""
    return natural_id("market", game_id, kind, market_type, period, participant_id or "")
