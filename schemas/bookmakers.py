"""The bookmakers we know, by the key a source gives them, and what kind of operator each is.

One definition: consensus (`projections.consensus`) and the docs (docs/odds.md, "Bookmakers")
read this table.

- `sportsbook`: sets its own prices and takes bets against them. Its prices are consensus inputs.
- `exchange`: matches bettors with each other (back and lay). Its prices are other bettors'
  offers, often with no margin on one side or thin, so they are never consensus inputs: neither
  its lay prices (`h2h_lay`, market kind `exchange`) nor its back prices (`h2h` quotes of an
  exchange book). They stay in the internal per-book table.
- `dfs`: a daily-fantasy or pick'em operator; its numbers are not odds on the game. Never an input.
- `published_line`: not a bookmaker but a source that publishes one line per game, attributed
  to no bookmaker (nflverse's `spread_line`, `total_line` and moneylines, "the spread line for
  the game"). Never counted as a bookmaker; a line no two bookmakers price is served from it,
  labelled as that source's line (see docs/odds.md).

A key not listed is taken as a sportsbook (the tests' and a new feed's books): list exchanges
and DFS operators here before ingesting them.
"""

from __future__ import annotations

from typing import Literal

import msgspec

BookKind = Literal["sportsbook", "exchange", "dfs", "published_line"]


class Bookmaker(msgspec.Struct, frozen=True):
    key: str
    name: str
    kind: BookKind
    note: str = ""


_SPORTSBOOKS = (
    # The Odds API keys in ingest/samples/oddsapi (every one of them is listed here or below)
    ("barstool", "Barstool Sportsbook"), ("betclic", "Betclic"), ("betmgm", "BetMGM"),
    ("betonlineag", "BetOnline.ag"), ("betrivers", "BetRivers"), ("betus", "BetUS"), ("betway", "Betway"),
    ("bovada", "Bovada"), ("circasports", "Circa Sports"), ("draftkings", "DraftKings"), ("fanduel", "FanDuel"),
    ("foxbet", "FOX Bet"), ("gtbets", "GTbets"), ("intertops", "Intertops"), ("lowvig", "LowVig.ag"),
    ("marathonbet", "Marathon Bet"), ("mybookieag", "MyBookie.ag"), ("nordicbet", "Nordic Bet"),
    ("onexbet", "1xBet"), ("pinnacle", "Pinnacle"), ("pointsbetus", "PointsBet (US)"), ("sport888", "888sport"),
    ("sugarhouse", "SugarHouse"), ("unibet", "Unibet"), ("williamhill", "William Hill"),
    ("williamhill_us", "William Hill (US)"), ("wynnbet", "WynnBET"),
    # the sandbox day's simulated books (ingest/sandbox/books.py)
    ("sim_north", "Sim North"), ("sim_south", "Sim South"), ("sim_east", "Sim East"), ("sim_west", "Sim West"),
)

_OTHERS = (
    # in the samples: both quote `h2h_lay` (lay odds exist only on an exchange) beside `h2h` back prices
    Bookmaker("betfair", "Betfair", "exchange", "Betfair Exchange: back prices in h2h, lay prices in h2h_lay"),
    Bookmaker("matchbook", "Matchbook", "exchange", "back prices in h2h, lay prices in h2h_lay"),
    # exchange and pick'em keys The Odds API lists for other regions (not in the samples)
    Bookmaker("betfair_ex_eu", "Betfair Exchange (EU)", "exchange"),
    Bookmaker("betfair_ex_uk", "Betfair Exchange (UK)", "exchange"),
    Bookmaker("betfair_ex_au", "Betfair Exchange (AU)", "exchange"),
    Bookmaker("smarkets", "Smarkets", "exchange"),
    Bookmaker("prizepicks", "PrizePicks", "dfs"),
    Bookmaker("underdog", "Underdog Fantasy", "dfs"),
    # the one line per game nflverse's schedule file publishes (ingest/nflverse_games.py)
    Bookmaker("nflverse", "nflverse closing line", "published_line",
              "nflverse publishes one line per game and names no bookmaker"),
)

REGISTRY: dict[str, Bookmaker] = {
    **{key: Bookmaker(key, name, "sportsbook") for key, name in _SPORTSBOOKS},
    **{b.key: b for b in _OTHERS},
}

NOT_CONSENSUS_INPUTS: frozenset[str] = frozenset(k for k, b in REGISTRY.items() if b.kind in ("exchange", "dfs"))
PUBLISHED_LINES: frozenset[str] = frozenset(k for k, b in REGISTRY.items() if b.kind == "published_line")


def kind_of(key: str) -> BookKind:
    book = REGISTRY.get(key)
    return "sportsbook" if book is None else book.kind


__all__ = ["BookKind", "Bookmaker", "REGISTRY", "NOT_CONSENSUS_INPUTS", "PUBLISHED_LINES", "kind_of"]
