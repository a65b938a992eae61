"""When each season runs, as a source states it: the first and last day of competition (the
NFL: the kickoff game to the Super Bowl; European leagues: the first to the last match day).

A season's `starts_on` / `ends_on` come from this table and from nothing else: the games that
happen to be loaded say only when those games are (a file of week 10 odds is not the NFL 2021
season). A season not listed here has null dates. Add a season with the source that states its
dates.
"""

from __future__ import annotations

from datetime import date

import msgspec


class SeasonDates(msgspec.Struct, frozen=True):
    competition: str
    label: str
    starts_on: date
    ends_on: date
    source: str  # who states these dates, and where


_WIKIPEDIA = "Wikipedia, {} (season infobox)"

SEASONS: dict[tuple[str, str], SeasonDates] = {(s.competition, s.label): s for s in (
    SeasonDates("nfl", "2021", date(2021, 9, 9), date(2022, 2, 13), _WIKIPEDIA.format("2021 NFL season")),
    SeasonDates("nfl", "2022", date(2022, 9, 8), date(2023, 2, 12), _WIKIPEDIA.format("2022 NFL season")),
    SeasonDates("nfl", "2023", date(2023, 9, 7), date(2024, 2, 11), _WIKIPEDIA.format("2023 NFL season")),
    SeasonDates("nfl", "2024", date(2024, 9, 5), date(2025, 2, 9), _WIKIPEDIA.format("2024 NFL season")),
    SeasonDates("nfl", "2025", date(2025, 9, 4), date(2026, 2, 8), _WIKIPEDIA.format("2025 NFL season")),
    SeasonDates("epl", "2024-25", date(2024, 8, 16), date(2025, 5, 25), _WIKIPEDIA.format("2024–25 Premier League")),
    SeasonDates("serie_a", "2021-22", date(2021, 8, 21), date(2022, 5, 22), _WIKIPEDIA.format("2021–22 Serie A")),
)}


def season_dates(competition: str, label: str) -> SeasonDates | None:
    return SEASONS.get((competition, label))


__all__ = ["SEASONS", "SeasonDates", "season_dates"]
