"""What people call a team besides its name: the nicknames and short names search must know.

Keyed by competition and the team's natural key (NFL: the franchise's nflverse abbreviation;
soccer: the normalised club name, as `ingest.team_aliases.soccer_team_key` makes it). Each entry
is a name the team is widely known by, as its Wikipedia article states it (the infobox's
"Nickname(s)" field, or the article's opening line for a club's short name); the nflverse team
nickname (Chiefs, 49ers, ...) is already part of every NFL team's full name. Only names that
point at one team within the competition are listed.
"""

from __future__ import annotations

from schemas.natural_keys import team_id

SOURCE = "Wikipedia team and club articles (infobox nicknames, common short names)"

NICKNAMES: dict[tuple[str, str], tuple[str, ...]] = {
    # NFL
    ("nfl", "ARI"): ("Cards", "Big Red"),
    ("nfl", "ATL"): ("Dirty Birds",),
    ("nfl", "BAL"): ("Purple",),
    ("nfl", "CAR"): ("Cats",),
    ("nfl", "CHI"): ("Monsters of the Midway",),
    ("nfl", "CIN"): ("Bungals", "Who Dey"),
    ("nfl", "CLE"): ("Dawgs",),
    ("nfl", "DAL"): ("Boys", "America's Team"),
    ("nfl", "DEN"): ("Orange Crush",),
    ("nfl", "GB"): ("Pack",),
    ("nfl", "IND"): ("Horseshoes",),
    ("nfl", "JAX"): ("Jags",),
    ("nfl", "LV"): ("Silver and Black",),
    ("nfl", "LAC"): ("Bolts",),
    ("nfl", "MIA"): ("Fins", "Phins"),
    ("nfl", "MIN"): ("Vikes", "Purple People Eaters"),
    ("nfl", "NE"): ("Pats",),
    ("nfl", "NO"): ("Who Dat",),
    ("nfl", "NYG"): ("G-Men", "Big Blue"),
    ("nfl", "NYJ"): ("Gang Green",),
    ("nfl", "PHI"): ("Birds", "Iggles"),
    ("nfl", "PIT"): ("Steel Curtain",),
    ("nfl", "SF"): ("Niners", "Forty Niners"),
    ("nfl", "SEA"): ("Hawks", "Legion of Boom"),
    ("nfl", "TB"): ("Bucs",),
    ("nfl", "WAS"): ("Commies", "Burgundy and Gold"),
    # Premier League
    ("epl", "arsenal"): ("Gunners",),
    ("epl", "aston villa"): ("Villa", "Villans"),
    ("epl", "bournemouth"): ("Cherries",),
    ("epl", "brentford"): ("Bees",),
    ("epl", "brighton and hove albion"): ("Brighton", "Seagulls", "Albion"),
    ("epl", "chelsea"): ("Blues",),
    ("epl", "crystal palace"): ("Palace", "Eagles"),
    ("epl", "everton"): ("Toffees",),
    ("epl", "fulham"): ("Cottagers",),
    ("epl", "ipswich town"): ("Ipswich", "Tractor Boys"),
    ("epl", "leicester city"): ("Leicester", "Foxes"),
    ("epl", "liverpool"): ("Reds",),
    ("epl", "manchester city"): ("Man City", "City", "Citizens"),
    ("epl", "manchester united"): ("Man Utd", "Man United", "Red Devils"),
    ("epl", "newcastle united"): ("Newcastle", "Magpies", "Toon"),
    ("epl", "nottingham forest"): ("Forest", "Nottm Forest"),
    ("epl", "southampton"): ("Saints",),
    ("epl", "tottenham hotspur"): ("Spurs", "Tottenham"),
    ("epl", "west ham united"): ("West Ham", "Hammers", "Irons"),
    ("epl", "wolverhampton wanderers"): ("Wolves",),
    # Serie A
    ("serie_a", "milan"): ("AC Milan", "Rossoneri"),
    ("serie_a", "inter milan"): ("Inter", "Internazionale", "Nerazzurri"),
    ("serie_a", "juventus"): ("Juve", "Bianconeri", "Old Lady"),
    ("serie_a", "roma"): ("AS Roma", "Giallorossi"),
    ("serie_a", "lazio"): ("Biancocelesti",),
    ("serie_a", "napoli"): ("Partenopei",),
    ("serie_a", "fiorentina"): ("Viola",),
    ("serie_a", "atalanta"): ("La Dea",),
    ("serie_a", "torino"): ("Toro", "Granata"),
    ("serie_a", "hellas verona"): ("Verona", "Gialloblu"),
    ("serie_a", "sampdoria"): ("Samp", "Blucerchiati"),
    ("serie_a", "genoa"): ("Grifone",),
    ("serie_a", "bologna"): ("Rossoblu",),
    ("serie_a", "udinese"): ("Zebrette",),
    ("serie_a", "sassuolo"): ("Neroverdi",),
}

BY_TEAM_ID: dict[str, tuple[str, ...]] = {team_id(c, key): names for (c, key), names in NICKNAMES.items()}


def nicknames(team: str) -> tuple[str, ...]:
    """The nicknames of a `tm_` ID (none when the table does not list the team)."""
    return BY_TEAM_ID.get(team, ())


__all__ = ["NICKNAMES", "SOURCE", "nicknames"]
