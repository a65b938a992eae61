"""The numbered table of answer categories: what kind of question, which tier of answer, which
playbook composes it. Pure: the one definition docs/answers.md describes.

A category's number never changes meaning (clients may store it); new categories take new
numbers. `tier` says what an answer of the category stands on:

- `calculation`: figures the odds maths computed from numbers in the question;
- `data`: figures read from the read models (games, markets, players), with their source and time;
- `reference`: a reviewed library entry (or registry entry) cited, few or no figures;
- `refusal`: a polite refusal, no figures (`refusal` says why and what can be asked instead).

A playbook is the fixed sequence of reads, calculations and sentence templates that makes an
answer of its category, versioned like a formula card (`name@version`): the version moves when
what the playbook reads, computes or says changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Literal

Tier = Literal["calculation", "data", "reference", "refusal"]


class Category(IntEnum):
    OUT_OF_SCOPE = 0
    ODDS_CONVERSION = 1
    PAYOUT = 2
    NO_VIG_HOLD = 3
    MARKET = 4
    GAME = 5
    SLATE = 6
    PLAYER_STATS = 7
    INJURY_NEWS = 8
    REFERENCE = 9
    STRATEGY = 10


@dataclass(frozen=True)
class CategoryInfo:
    category: Category
    name: str
    tier: Tier
    playbook: str  # name@version
    wagering: bool  # answers of the category touch wagering (rg_line, responsible-gambling link)
    what: str  # one line, for docs and for "what you can ask instead"
    example: str


CATEGORIES: dict[Category, CategoryInfo] = {
    c.category: c
    for c in (
        CategoryInfo(Category.OUT_OF_SCOPE, "out_of_scope", "refusal", "refusal@1", True,
                     "predictions, picks, tips, non-public data, personal financial advice, anything off sports "
                     "and betting maths: refused politely", "Who wins tonight?"),
        CategoryInfo(Category.ODDS_CONVERSION, "odds_conversion", "calculation", "odds.convert@1", True,
                     "a price in every format and its implied probability", "What is +150 in decimal odds?"),
        CategoryInfo(Category.PAYOUT, "payout", "calculation", "bet.payout@1", True,
                     "what a stake returns at a price (or a parlay of prices), profit and break-even",
                     "How much does a $20 bet at 5/2 pay?"),
        CategoryInfo(Category.NO_VIG_HOLD, "no_vig_hold", "calculation", "devig.prices@1", True,
                     "the no-vig probabilities, fair prices and hold of prices you give",
                     "What is the hold on -110 / -110?"),
        CategoryInfo(Category.MARKET, "market", "data", "market.consensus@1", True,
                     "a game's consensus prices, no-vig probabilities and hold", "Chiefs Ravens spread?"),
        CategoryInfo(Category.GAME, "game", "data", "game.state@1", False,
                     "a game's schedule, status or score", "What was the score of the Bills game in week 1?"),
        CategoryInfo(Category.SLATE, "slate", "data", "slate.day@1", False,
                     "the games of a day or a week", "What NFL games are on 2024-09-08?"),
        CategoryInfo(Category.PLAYER_STATS, "player_stats", "data", "player.stats@1", False,
                     "a player's stat lines (season and latest game)", "How many passing yards did Mahomes have?"),
        CategoryInfo(Category.INJURY_NEWS, "injury_news", "data", "player.availability@1", False,
                     "a player's injury report, availability and news", "Is Christian McCaffrey injured?"),
        CategoryInfo(Category.REFERENCE, "reference", "reference", "reference.entry@1", False,
                     "a reviewed term, house rule, law or tax entry of the library", "What does vig mean?"),
        CategoryInfo(Category.STRATEGY, "strategy", "reference", "strategy.verdict@1", True,
                     "a betting or fantasy strategy's verdict and evidence from the registry",
                     "Does the martingale system work?"),
    )
}


def info(category: Category) -> CategoryInfo:
    return CATEGORIES[category]


# what a refusal offers instead: the categories that answer from public data, as examples
ASK_INSTEAD = [CATEGORIES[c].example for c in (
    Category.ODDS_CONVERSION, Category.NO_VIG_HOLD, Category.MARKET, Category.GAME, Category.REFERENCE,
)]
