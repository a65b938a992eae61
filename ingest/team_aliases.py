"""Who a team is, whatever a source calls it: the alias data behind identity resolution.

NFL: one entry per franchise, keyed by its current nflverse abbreviation (nflverse calls the
Rams `LA`). Every abbreviation, full name and nickname the franchise has gone by (relocations
and renames included) maps to that key, so Oakland Raiders, OAK and LV are one `tm_`.

Soccer: clubs are keyed by their normalised name within a competition; `SOCCER_VARIANTS`
maps the common short forms bookmakers and feeds use to the full club name.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass


@dataclass(frozen=True)
class Franchise:
    key: str  # current nflverse abbreviation: the natural key of the team
    name: str  # current full name
    nickname: str
    former_names: tuple[str, ...] = ()
    other_abbreviations: tuple[str, ...] = ()  # older nflverse, PFR, ESPN and sportsbook codes


NFL_FRANCHISES: tuple[Franchise, ...] = (
    Franchise("ARI", "Arizona Cardinals", "Cardinals", ("Phoenix Cardinals", "St. Louis Cardinals"), ("ARZ", "CRD", "PHO")),
    Franchise("ATL", "Atlanta Falcons", "Falcons", (), ("ATF",)),
    Franchise("BAL", "Baltimore Ravens", "Ravens", (), ("BLT", "RAV")),
    Franchise("BUF", "Buffalo Bills", "Bills"),
    Franchise("CAR", "Carolina Panthers", "Panthers"),
    Franchise("CHI", "Chicago Bears", "Bears"),
    Franchise("CIN", "Cincinnati Bengals", "Bengals"),
    Franchise("CLE", "Cleveland Browns", "Browns", (), ("CLV",)),
    Franchise("DAL", "Dallas Cowboys", "Cowboys"),
    Franchise("DEN", "Denver Broncos", "Broncos"),
    Franchise("DET", "Detroit Lions", "Lions"),
    Franchise("GB", "Green Bay Packers", "Packers", (), ("GNB",)),
    Franchise("HOU", "Houston Texans", "Texans", (), ("HST", "HTX")),
    Franchise("IND", "Indianapolis Colts", "Colts", ("Baltimore Colts",), ("CLT",)),
    Franchise("JAX", "Jacksonville Jaguars", "Jaguars", (), ("JAC",)),
    Franchise("KC", "Kansas City Chiefs", "Chiefs", (), ("KAN",)),
    Franchise("LV", "Las Vegas Raiders", "Raiders", ("Oakland Raiders", "Los Angeles Raiders"), ("OAK", "LVR", "RAI")),
    Franchise("LAC", "Los Angeles Chargers", "Chargers", ("San Diego Chargers",), ("SD", "SDG", "SGD")),
    Franchise("LA", "Los Angeles Rams", "Rams", ("St. Louis Rams",), ("LAR", "STL", "RAM", "SLR")),
    Franchise("MIA", "Miami Dolphins", "Dolphins"),
    Franchise("MIN", "Minnesota Vikings", "Vikings"),
    Franchise("NE", "New England Patriots", "Patriots", (), ("NWE",)),
    Franchise("NO", "New Orleans Saints", "Saints", (), ("NOR",)),
    Franchise("NYG", "New York Giants", "Giants"),
    Franchise("NYJ", "New York Jets", "Jets"),
    Franchise("PHI", "Philadelphia Eagles", "Eagles"),
    Franchise("PIT", "Pittsburgh Steelers", "Steelers"),
    Franchise("SF", "San Francisco 49ers", "49ers", (), ("SFO",)),
    Franchise("SEA", "Seattle Seahawks", "Seahawks"),
    Franchise("TB", "Tampa Bay Buccaneers", "Buccaneers", (), ("TAM",)),
    Franchise("TEN", "Tennessee Titans", "Titans", ("Tennessee Oilers", "Houston Oilers"), ("OTI",)),
    Franchise(
        "WAS", "Washington Commanders", "Commanders",
        ("Washington Redskins", "Washington Football Team", "Washington"), ("WSH",),
    ),
)
NFL_BY_KEY: dict[str, Franchise] = {f.key: f for f in NFL_FRANCHISES}

# short forms some feeds use for a club, mapped to the name the club is keyed by
SOCCER_VARIANTS: dict[str, dict[str, str]] = {
    "epl": {
        "man utd": "Manchester United",
        "man united": "Manchester United",
        "man city": "Manchester City",
        "spurs": "Tottenham Hotspur",
        "tottenham": "Tottenham Hotspur",
        "wolves": "Wolverhampton Wanderers",
        "nottm forest": "Nottingham Forest",
        "nott'm forest": "Nottingham Forest",
        "newcastle": "Newcastle United",
        "west ham": "West Ham United",
        "brighton": "Brighton and Hove Albion",
        "leicester": "Leicester City",
        "ipswich": "Ipswich Town",
        "afc bournemouth": "Bournemouth",
        "sheffield utd": "Sheffield United",
        "leeds": "Leeds United",
    },
    "serie_a": {
        "inter": "Inter Milan",
        "internazionale": "Inter Milan",
        "fc internazionale milano": "Inter Milan",
        "milan": "AC Milan",
        "verona": "Hellas Verona FC",
        "hellas verona": "Hellas Verona FC",
        "atalanta": "Atalanta BC",
        "roma": "AS Roma",
        "ss lazio": "Lazio",
        "ssc napoli": "Napoli",
        "juventus fc": "Juventus",
    },
}

_PUNCT = re.compile(r"[^\w\s]")
_SPACES = re.compile(r"\s+")
# club-form words that say nothing about which club it is ("Atalanta BC" is Atalanta)
_CLUB_WORDS = frozenset({"fc", "afc", "cf", "bc", "sc", "ssc", "ss", "as", "ac", "calcio", "1907", "1909", "1913"})


def fold(name: str) -> str:
    """Case, accents, punctuation and spacing removed: "St. Louis  Rams" -> "st louis rams"."""
    text = unicodedata.normalize("NFKD", name)
    text = "".join(c for c in text if not unicodedata.combining(c)).casefold()
    text = text.replace("&", " and ")
    return _SPACES.sub(" ", _PUNCT.sub(" ", text.replace("'", ""))).strip()


def _nfl_lookup() -> dict[str, str]:
    table: dict[str, str] = {}
    for f in NFL_FRANCHISES:
        city = f.name.removesuffix(" " + f.nickname)
        names = (f.key, *f.other_abbreviations, f.name, f.nickname, *f.former_names)
        for name in names:
            table[fold(name)] = f.key
        # "Kansas City" alone is ambiguous only for the two-team cities; skip those
        if city not in ("Los Angeles", "New York"):
            table.setdefault(fold(city), f.key)
    return table


NFL_LOOKUP: dict[str, str] = _nfl_lookup()


def nfl_team_key(name: str) -> str | None:
    """The franchise key (KC, LV, LA, ...) for any abbreviation or name, or None if unknown."""
    return NFL_LOOKUP.get(fold(name))


def soccer_team_key(competition: str, name: str) -> str:
    """The normalised club name that keys a soccer team within its competition."""
    full = SOCCER_VARIANTS.get(competition, {}).get(fold(name), name)
    words = [w for w in fold(full).split(" ") if w not in _CLUB_WORDS]
    return " ".join(words) or fold(full)
