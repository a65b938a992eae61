"""What people call a team besides its name: the nicknames and short names search must know.

Keyed by competition and the team's natural key (NFL: the franchise's nflverse abbreviation;
soccer: the normalised club name, as `ingest.team_aliases.soccer_team_key` makes it). The
nflverse team nickname (Chiefs, 49ers, ...) is already part of every NFL team's full name, and a
club's short form that is a word of its name ("Villa", "Palace") is found through the name.

How the table is sourced: every name here was read, on the day in `checked`, on the page its
`Source` names (URL, title as the page shows it, publisher, the page's own date when it gives
one, and what the page says in our words): a Wikipedia article (its infobox "Nickname(s)" /
"Team nicknames" field or its opening line), the league's or a major publisher's page. A name
stays only when a page we read states that the team is called by it; a name we could not find
so stated was left out, not kept on memory. Only names that point at one team within the
competition are listed (tests/unit/test_team_nicknames.py checks both rules).

Names people use respectfully only: a mocking name for a team or its fans (a rival's pun on the
team name, say) is left out even when a source records it, since search should find a team by
the names its own followers and neutral media use. Names of a team's units (a defensive line's
nickname), fan bases and chants are not names of the team and are not listed either.
"""

from __future__ import annotations

from typing import NamedTuple

from schemas.natural_keys import team_id


class Source(NamedTuple):
    """The page a nickname was read on."""

    url: str
    title: str | None  # the page's heading as the copy we read shows it; None when it showed none
    publisher: str
    published: str | None  # the date the page gives itself (ISO); None when it gives none
    checked: str  # the day we read it (ISO)
    says: str  # what the page states about the name, in our words


class Nicknames(NamedTuple):
    """Names of one team, all stated by one source."""

    names: tuple[str, ...]
    source: Source


CHECKED = "2026-11-26"


def _wikipedia(url: str, title: str, says: str, published: str | None = None, edition: str = "English") -> Source:
    return Source(url, title, f"Wikipedia ({edition}), Wikimedia Foundation", published, CHECKED, says)


NICKNAMES: dict[tuple[str, str], tuple[Nicknames, ...]] = {
    # NFL
    ("nfl", "ATL"): (Nicknames(("Dirty Birds",), Source(
        "https://bloggingdirty.com/2016/07/07/atlanta-falcons-where-dirty-bird-nickname-come-from",
        "Atlanta Falcons: Where does the \u201cDirty Bird\u201d nickname come from?", "Blogging Dirty (FanSided)",
        "2016-07-07", CHECKED, "the Falcons and their fans are sometimes called the Dirty Birds")),),
    ("nfl", "CHI"): (Nicknames(("Monsters of the Midway",), _wikipedia(
        "https://en.wikipedia.org/wiki/Monsters_of_the_Midway", "Monsters of the Midway",
        "the name is best known as the nickname of the NFL's Chicago Bears")),),
    ("nfl", "DAL"): (Nicknames(("America's Team",), _wikipedia(
        "https://en.wikipedia.org/wiki/America%27s_Team", "America's Team",
        "the term is a nickname of the Dallas Cowboys, coined in 1978")),),
    ("nfl", "JAX"): (Nicknames(("Jags",), _wikipedia(
        "https://en.m.wikipedia.org/wiki/Jacksonville_Jaguars", "Jacksonville Jaguars",
        "the infobox's Team nicknames field lists Jags")),),
    ("nfl", "LV"): (Nicknames(("Silver and Black",), Source(
        "https://fansided.com/2021/04/21/las-vegas-raiders-nickname-history-explained",
        "Las Vegas Raiders nickname history explained", "FanSided", "2021-04-21", CHECKED,
        "the Raiders are known today by the nickname the Silver and Black")),),
    ("nfl", "LAC"): (Nicknames(("Bolts",), Source(
        "https://boltbeat.com/2012/05/20/top-5-bolt-prides/", "Top 5 \u2018Bolt Prides\u2019", "Bolt Beat (FanSided)",
        "2012-05-20", CHECKED, "a Chargers fan writer calls the team \u201cour Bolts\u201d")),),
    ("nfl", "NE"): (Nicknames(("Pats",), _wikipedia(
        "https://sco.m.wikipedia.org/wiki/New_England_Patriots", "New England Patriots",
        "the infobox's Team nicknames field lists The Pats", edition="Scots")),),
    ("nfl", "NYG"): (Nicknames(("G-Men",), Source(
        "https://www.nfl.com/news/nfl-hot-or-not-giants-and-browns-inspire-gregg-williams-gets-fired", None,
        "NFL.com", None, CHECKED, "the Giants' G-Men nickname, linked with Chris Berman's ESPN calls")),),
    ("nfl", "SF"): (
        Nicknames(("Niners",), Source(
            "https://fansided.com/posts/what-is-a-49er-san-francisco-nfl-mascot-explained-01hp2f3zc8ge",
            "What is a 49er? San Francisco NFL mascot explained", "FanSided", "2024-02-11", CHECKED,
            "calls the 49ers' helmet the gold Niners helmet")),
        Nicknames(("Forty Niners",), Source(
            "https://www.mercurynews.com/2020/02/02/why-the-san-francisco-49ers-are-called-the-49ers/",
            "Why the San Francisco 49ers are called the 49ers", "The Mercury News", "2020-02-02", CHECKED,
            "the team is registered as the San Francisco Forty Niners")),
    ),
    ("nfl", "TB"): (Nicknames(("Bucs",), _wikipedia(
        "https://en.wikipedia.org/wiki/Tampa_Bay_Buccaneers?oldid=913062253", "Tampa Bay Buccaneers",
        "the infobox's Team nicknames field lists The Bucs (revision of 29 August 2019)", published="2019-08-29")),),
    # Premier League
    ("epl", "arsenal"): (Nicknames(("Gunners",), Source(
        "https://www.reference.com/sports-active-lifestyle/arsenal-f-c-known-gunners-52236190716aa457",
        "Why Is the Arsenal F.C. Known As \"The Gunners\"?", "Reference.com", None, CHECKED,
        "Arsenal are known as the Gunners, after the club's military origins in Woolwich")),),
    ("epl", "bournemouth"): (Nicknames(("Cherries",), Source(
        "https://soccer.nbcsports.com/2023/02/23/ever-wonder-why-bournemouth-are-nicknamed-the-cherries/",
        "Ever Wonder why Bournemouth are nicknamed the Cherries?", "NBC Sports", "2023-02-23", CHECKED,
        "AFC Bournemouth are nicknamed the Cherries")),),
    ("epl", "brentford"): (Nicknames(("Bees",), Source(
        "https://www.wycombewanderers.co.uk/news/2020/november/opposition-watch-brentford/",
        "Opposition Watch: Brentford", "Wycombe Wanderers FC", "2020-11-20", CHECKED,
        "Brentford FC are nicknamed the Bees")),),
    ("epl", "brighton and hove albion"): (Nicknames(("Seagulls",), Source(
        "https://www.sportskeeda.com/football/5-lesser-known-stories-about-brighton-and-hove-albion-sstl",
        "5 lesser-known stories about Brighton and Hove Albion", "Sportskeeda", "2018-08-20", CHECKED,
        "Brighton are commonly known as the Seagulls, later the club's official nickname")),),
    ("epl", "crystal palace"): (Nicknames(("Eagles",), Source(
        "https://worldsoccertalk.com/crystal-palace-primer/", None, "World Soccer Talk", None, CHECKED,
        "Crystal Palace's nickname: the Eagles")),),
    ("epl", "everton"): (Nicknames(("Toffees",), Source(
        "https://www.reference.com/sports-active-lifestyle/everton-soccer-team-called-toffees-15fdd331415b1db0",
        "Why Is the Everton Soccer Team Called the Toffees?", "Reference.com", None, CHECKED,
        "Everton are called the Toffees")),),
    ("epl", "fulham"): (Nicknames(("Cottagers",), Source(
        "https://liverpooloffside.sbnation.com/2011/5/6/3107772/tea-and-crumpets-with-cottagers-confidential",
        "Tea and Crumpets with Cottagers Confidential", "The Liverpool Offside (SB Nation)", "2011-05-06", CHECKED,
        "Fulham are the Cottagers")),),
    ("epl", "ipswich town"): (Nicknames(("Tractor Boys",), Source(
        "https://footballleagueworld.co.uk/why-are-ipswich-town-nicknamed-the-tractor-boys/",
        "Why are Ipswich Town nicknamed the Tractor Boys?", "Football League World", "2023-09-09", CHECKED,
        "Ipswich Town are often called the Tractor Boys, a self-deprecating name from the late 1990s")),),
    ("epl", "leicester city"): (Nicknames(("Foxes",), Source(
        "https://www.liveabout.com/leicester-city-called-the-foxes-3896512", "Why Are Leicester City Called The Foxes?",
        "LiveAbout", None, CHECKED, "Leicester City are called the Foxes, after Leicestershire's foxhunting history")),),
    ("epl", "manchester city"): (Nicknames(("Man City", "City", "Citizens"), Source(
        "https://www.sportingnews.com/us/soccer/news/man-city-citizens-cityzens-nickname/uzxhqmf8s8kbujgvpbgwhxpy",
        None, "The Sporting News", "2023-06-09", CHECKED,
        "calls the club Man City; its nicknames are the Sky Blues and the Citizens, along with the shortened City")),),
    ("epl", "manchester united"): (Nicknames(("Red Devils", "Man Utd"), Source(
        "https://chatsports.com/soccer/a/source/why-are-manchester-united-called-the-red-devils-16434925", None,
        "Goal (via Chat Sports)", None, CHECKED,
        "Manchester United are most commonly known as the Red Devils; the article calls the club Man Utd")),),
    ("epl", "newcastle united"): (Nicknames(("Magpies", "Toon"), Source(
        "https://worldsoccertalk.com/newcastle-united-primer/", None, "World Soccer Talk", None, CHECKED,
        "Newcastle United's nickname: Magpies, or the Toon")),),
    ("epl", "southampton"): (Nicknames(("Saints",), Source(
        "https://sports.yahoo.com/ever-wonder-why-southampton-called-124840618.html",
        "Ever Wonder why Southampton are called The Saints?", "NBC Sports (on Yahoo Sports)", None, CHECKED,
        "Southampton are nicknamed the Saints, after their founding at St Mary's Church")),),
    ("epl", "tottenham hotspur"): (Nicknames(("Spurs",), _wikipedia(
        "https://sco.m.wikipedia.org/wiki/Tottenham_Hotspur_F.C.", "Tottenham Hotspur F.C.",
        "the club is commonly called Spurs; the infobox's Nickname(s) field lists Spurs", edition="Scots")),),
    ("epl", "west ham united"): (Nicknames(("Hammers", "Irons"), Source(
        "https://www.kumb.com/article.php?id=2922", "Exclusive chapter from 'Mr Moon'", "KUMB.com", None, CHECKED,
        "West Ham's match-day announcer: the papers call the club the Hammers, its fans call it the Irons")),),
    ("epl", "wolverhampton wanderers"): (Nicknames(("Wolves",), Source(
        "https://soccer.nbcsports.com/2023/02/18/ever-wonder-why-wolverhampton-wanderers-are-known-as-wolves/",
        None, "NBC Sports", "2023-02-18", CHECKED, "Wolverhampton Wanderers are nicknamed Wolves")),),
    # Serie A
    ("serie_a", "atalanta"): (Nicknames(("La Dea",), Source(
        "https://www.violanation.com/special-features/2018/3/2/17067940/what-are-the-best-team-nicknames-in-serie-a",
        "What are the best team nicknames in Serie A?", "Viola Nation (SB Nation)", "2018-03-02", CHECKED,
        "Atalanta have the nickname la Dea (the goddess)")),),
    ("serie_a", "inter milan"): (
        Nicknames(("Inter", "Internazionale"), Source(
            "https://www.ilmessaggero.it/t/inter/", "Inter, la squadra nerazzurra di Milano", "Il Messaggero", None,
            CHECKED, "FC Internazionale Milano is better known as Internazionale or simply Inter")),
        Nicknames(("Nerazzurri",), Source(
            "https://www.sportingnews.com/us/soccer/news/man-city-citizens-cityzens-nickname/uzxhqmf8s8kbujgvpbgwhxpy",
            None, "The Sporting News", "2023-06-09", CHECKED,
            "calls Inter Milan, Manchester City's Champions League final opponent, the Nerazzurri")),
    ),
    ("serie_a", "juventus"): (
        Nicknames(("Juve",), Source(
            "https://panoramitalia.com/index.php/2023/05/17/how-the-old-lady-of-italian-football-earned-its-iconic-nickname/",
            None, "Panoram Italia", "2023-05-17", CHECKED, "the club is commonly known as Juventus or Juve")),
        Nicknames(("Old Lady", "Bianconeri"), Source(
            "https://www.sportingnews.com/us/soccer/news/why-are-juventus-called-old-lady-nickname-trophies-history/jpxsu7nsv3kyimhbl3seb55v",
            "Why are Juventus called \"Old Lady\"? Nickname, trophies, history", "The Sporting News", None, CHECKED,
            "Juventus' affectionate nickname is the Old Lady; another is i bianconeri (the black-and-whites)")),
    ),
    ("serie_a", "lazio"): (Nicknames(("Biancocelesti",), _wikipedia(
        "https://it.m.wikipedia.org/wiki/Speciale:DiffMobile/94941891",
        "Societ\u00e0 Sportiva Lazio: differenze tra le versioni",
        "the article's nickname field lists Biancocelesti; its text says Lazio's players are called Biancocelesti",
        edition="Italian")),),
    ("serie_a", "napoli"): (Nicknames(("Partenopei",), Source(
        "https://www.cronachedellacampania.it/2025/03/napoli-maglia-parthenope/amp",
        "Il Napoli celebra i 2.500 anni della citt\u00e0 con la maglia \u201cParthenope\u201d", "Cronache della Campania",
        None, CHECKED, "calls Napoli il club partenopeo (the Partenopei's club)")),),
    ("serie_a", "roma"): (Nicknames(("Giallorossi",), Source(
        "https://www.gazzetta.it/fan-tokens/04-04-2023/roma-nuova-mascotte-si-chiama-romina-fan-token-460983973739.shtml",
        None, "La Gazzetta dello Sport", "2023-04-04", CHECKED,
        "calls Roma il club giallorosso and its fans i sostenitori giallorossi")),),
}

BY_TEAM_ID: dict[str, tuple[str, ...]] = {
    team_id(c, key): tuple(name for entry in entries for name in entry.names) for (c, key), entries in NICKNAMES.items()
}


def nicknames(team: str) -> tuple[str, ...]:
    """The nicknames of a `tm_` ID (none when the table does not list the team)."""
    return BY_TEAM_ID.get(team, ())


__all__ = ["BY_TEAM_ID", "NICKNAMES", "Nicknames", "Source", "nicknames"]
