"""Formula cards: every calculation's formula in words, its inputs, outputs and a public source.

A card is cited as `card_id@version`. Bump `version` whenever what a card computes
changes (formula, rounding, parameter meaning); wording fixes keep the version.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Card:
    id: str
    version: int
    name: str
    calculation: str  # the calculation (POST /v1/calculations/{name}) that runs it
    formula: str  # in words
    expression: str  # in symbols, plain text
    inputs: tuple[tuple[str, str], ...]  # (name, meaning)
    outputs: tuple[tuple[str, str], ...]
    sources: tuple[str, ...]

    @property
    def ref(self) -> str:
        return f"{self.id}@{self.version}"


_BOOK = "Buchdahl, J. (2003). Fixed Odds Sports Betting: Statistical Forecasting and Risk Management. London: High Stakes."
_EPSTEIN = "Epstein, R. A. (2009). The Theory of Gambling and Statistical Logic (2nd ed.). Academic Press."
_CLARKE = (
    "Clarke, S., Kovalchik, S. & Ingram, M. (2017). Adjusting bookmaker's odds to allow for overround. "
    "American Journal of Sports Science, 5(6), 45-49."
)
_STRUMBELJ = (
    "Štrumbelj, E. (2014). On determining probability forecasts from betting odds. "
    "International Journal of Forecasting, 30(4), 934-943."
)
_WISDOM = "Buchdahl, J. The Wisdom of the Crowd (updated version). football-data.co.uk."
_IMPLIED = (
    "Lindstrøm, J. C. (2023). implied: Convert Between Bookmaker Odds and Probabilities, R package version 0.5. "
    "https://CRAN.R-project.org/package=implied"
)
_ODDS = ("d", "decimal odds of each outcome (any price format is converted to decimal first)")
_PROBS = ("probabilities", "fair probability of each outcome, in input order, summing to 1")
_FAIR = ("fair_odds", "1 / probability for each outcome")

CARDS: tuple[Card, ...] = (
    Card(
        "odds.convert", 1, "Price formats", "convert",
        "Decimal odds are the total return per unit staked. American odds of +a pay a profit of a on 100 staked "
        "(decimal 1 + a/100); American odds of -a need a stake of a to win 100 (decimal 1 + 100/a). Fractional odds "
        "are the profit per unit staked (decimal 1 + fraction). The implied probability is 1 / decimal odds.",
        "d = 1 + a/100 (a >= 100); d = 1 + 100/|a| (a <= -100); d = 1 + n/m; p = 1/d",
        (("price", "one price"), ("format", "decimal, american, fractional or implied")),
        (("decimal", "decimal odds"), ("american", "American odds"), ("fractional", "fractional odds in lowest terms"),
         ("implied", "implied probability 1/d")),
        (_BOOK, _EPSTEIN),
    ),
    Card(
        "odds.overround", 1, "Overround and hold", "devig",
        "The overround is how far the implied probabilities of all outcomes sum above 1. The hold is the share of "
        "all money the book keeps when stakes are in proportion to the implied probabilities, whatever the result.",
        "S = sum(1/d_i); overround = S - 1; hold = 1 - 1/S",
        (_ODDS,),
        (("overround", "S - 1"), ("hold", "1 - 1/S")),
        (_STRUMBELJ, _CLARKE),
    ),
    Card(
        "devig.multiplicative", 1, "Margin removal: multiplicative (basic normalisation)", "devig",
        "Divide each implied probability by their sum, so the margin is taken from each outcome in proportion to "
        "its implied probability.",
        "p_i = (1/d_i) / S",
        (_ODDS,), (_PROBS, _FAIR),
        (_STRUMBELJ, _CLARKE),
    ),
    Card(
        "devig.additive", 1, "Margin removal: additive (equal margin per outcome)", "devig",
        "Subtract the same amount, the overround divided by the number of outcomes, from each implied probability. "
        "A long shot can fall below zero; the result then says so.",
        "p_i = 1/d_i - (S - 1)/n; parameter share = (S - 1)/n",
        (_ODDS,), (_PROBS, _FAIR, ("share", "the amount taken off each implied probability")),
        (_CLARKE,),
    ),
    Card(
        "devig.power", 1, "Margin removal: power", "devig",
        "Raise each implied probability to the same power k, the one that makes them sum to 1. Long shots lose a "
        "larger share of their implied probability than favourites (the favourite-longshot bias).",
        "p_i = (1/d_i)^k with sum(p_i) = 1; k found by Newton's method to |sum - 1| <= 1e-12",
        (_ODDS,), (_PROBS, _FAIR, ("k", "the exponent")),
        (_CLARKE, _WISDOM),
    ),
    Card(
        "devig.shin", 1, "Margin removal: Shin", "devig",
        "Shin's model of a book that faces a share z of insiders who know the result. The fair probabilities solve "
        "Shin's equation for the z at which they sum to 1; with two outcomes z has a closed form, otherwise it is "
        "found by Newton's method.",
        "p_i = (sqrt(z^2 + 4(1 - z)(1/d_i)^2 / S) - z) / (2(1 - z)) with sum(p_i) = 1",
        (_ODDS,), (_PROBS, _FAIR, ("z", "the insider share")),
        (
            "Shin, H. S. (1993). Measuring the incidence of insider trading in a market for state-contingent claims. "
            "The Economic Journal, 103(420), 1141-1153.",
            "Jullien, B. & Salanié, B. (1994). Measuring the incidence of insider trading: a comment on Shin. "
            "The Economic Journal, 104(427), 1418-1419.",
            _STRUMBELJ,
        ),
    ),
    Card(
        "devig.odds_ratio", 1, "Margin removal: odds ratio", "devig",
        "Divide the odds (p / (1 - p)) of every implied probability by the same ratio c, the one that makes the "
        "fair probabilities sum to 1.",
        "p_i / (1 - p_i) = ((1/d_i) / (1 - 1/d_i)) / c with sum(p_i) = 1; c found by Newton's method",
        (_ODDS,), (_PROBS, _FAIR, ("c", "the odds ratio")),
        ("Cheung, K. (2015), the odds ratio method, as set out in: " + _WISDOM, _IMPLIED),
    ),
    Card(
        "bet.payout", 1, "Payout, profit and break-even probability", "payout",
        "A winning bet returns the stake times the decimal odds; the profit is that return less the stake. "
        "The bet breaks even on average when the chance of winning is 1 / decimal odds.",
        "payout = stake * d; profit = stake * (d - 1); break_even = 1/d",
        (("stake", "amount staked"), _ODDS),
        (("payout", "returned on a win, stake included"), ("profit", "won on a win"),
         ("break_even_probability", "1/d")),
        (_EPSTEIN,),
    ),
    Card(
        "bet.parlay", 1, "Parlay (accumulator)", "parlay",
        "A parlay's decimal odds are the product of its legs' decimal odds. A pushed or void leg drops out (its "
        "odds become 1); if every leg drops out the stake is returned; one lost leg loses the parlay.",
        "d = product of d_j over legs that count; payout = stake * d, or 0 if a leg lost",
        (("legs", "each leg's odds and status: open, won, lost, push or void"), ("stake", "amount staked")),
        (("decimal_odds", "the parlay's odds"), ("payout", "returned"), ("profit", "payout - stake")),
        (_EPSTEIN,),
    ),
    Card(
        "bet.ev", 1, "Expected value and edge", "ev",
        "Given your probability p that a bet wins, its expected value is p times the payout less the stake; the "
        "edge is that per unit staked. The probability edge is p less the break-even probability.",
        "EV = stake * (p d - 1); edge = p d - 1; probability_edge = p - 1/d",
        (_ODDS, ("probability", "your probability that the bet wins"), ("stake", "amount staked")),
        (("expected_value", "average money won per bet"), ("edge", "average return per unit staked"),
         ("probability_edge", "p - 1/d")),
        (_EPSTEIN,),
    ),
    Card(
        "bet.kelly", 1, "Kelly stake", "kelly",
        "Kelly's stake maximises the long-run growth rate of a bankroll: the edge divided by the net odds. "
        "Fractional Kelly stakes a fixed fraction of it; the cap limits the share of bankroll on one bet. With no "
        "edge the stake is zero.",
        "f* = (p d - 1) / (d - 1); stake share = min(cap, max(0, fraction * f*))",
        (_ODDS, ("probability", "your probability that the bet wins"), ("fraction", "Kelly multiplier, 0 to 1"),
         ("cap", "largest share of bankroll"), ("bankroll", "optional")),
        (("full_fraction", "f*"), ("stake_fraction", "share of bankroll to stake"), ("stake", "bankroll * share")),
        ("Kelly, J. L. (1956). A new interpretation of information rate. Bell System Technical Journal, 35(4), 917-926.",
         "Thorp, E. O. (2006). The Kelly criterion in blackjack, sports betting and the stock market. In Handbook of "
         "Asset and Liability Management, Vol. 1. Elsevier."),
    ),
    Card(
        "bet.arbitrage", 1, "Arbitrage (sure bet)", "arbitrage",
        "With the best price on every outcome of one market, a profit is certain when the implied probabilities "
        "sum below 1. Staking in proportion to each implied probability pays the same on every outcome.",
        "S = sum(1/d_i); arbitrage when S < 1; stake_i = total * (1/d_i) / S; payout = total / S",
        (_ODDS, ("stake", "total to stake")),
        (("stakes", "stake per outcome"), ("payout", "the same on every outcome"), ("roi", "1/S - 1")),
        ("Franck, E., Verbeek, E. & Nüesch, S. (2013). Inter-market arbitrage in betting. Economica, 80(318), 300-325.",),
    ),
    Card(
        "bet.middle", 1, "Middle", "middle",
        "Two opposite positions on one spread or total middle when some final score wins both: an over below an "
        "under, or two sides whose lines add to more than zero. Each score is graded win, push or lose per position.",
        "total: both win when o < points < u; spread: both win when -h < home margin < a",
        (("kind", "spread or total"), ("positions", "two of: side, line, odds, stake")),
        (("middle_outcomes", "scores where both win"), ("scenarios", "every range of scores and its profit")),
        ("Wong, S. (2001). Sharp Sports Betting. Pi Yee Press.",),
    ),
    Card(
        "bet.clv", 1, "Closing-line value", "clv",
        "How the price you took compares with the closing fair probability (the closing prices with the margin "
        "removed): the expected return per unit had the bet been struck at the close's fair price.",
        "CLV = d_taken * p_close - 1; probability_edge = p_close - 1/d_taken",
        (("taken", "the odds taken"), ("closing_probability", "no-vig closing probability, or closing odds to devig")),
        (("clv", "expected return per unit at the closing fair price"), ("beat_close", "CLV > 0")),
        ("Buchdahl, J. (2016). Squares & Sharps, Suckers & Sharks: The Science, Psychology & Philosophy of "
         "Gambling. Harpenden: High Stakes.",),
    ),
)

_BY_ID = {card.id: card for card in CARDS}


def get(card_id: str) -> Card | None:
    """The card named `id` or `id@version` (that version only); None when there is none."""
    name, at, version = card_id.partition("@")
    card = _BY_ID.get(name)
    if card is None or (at and version != str(card.version)):
        return None
    return card


def ref(card_id: str) -> str:
    return _BY_ID[card_id].ref
