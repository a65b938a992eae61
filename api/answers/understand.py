"""Understand a question: the numbers, dates, states and cue words in it, and the phrases that may
name a team, player or game (looked up in the search index by api.answers.entities). Pure.

Nothing here keeps the question: a `Reading` holds what was read out of it (prices, stakes,
dates, cue words, candidate phrases) for the one request, and is never logged or stored.

Cues are word lists and patterns per category (the table in api.answers.categories); the
category itself is chosen in api.answers.decide, once the entities are known.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Literal

from domain.devig import METHODS
from domain.prices import OddsFormat, PriceFormat

US_STATES = {
    "AL": "alabama", "AK": "alaska", "AZ": "arizona", "AR": "arkansas", "CA": "california", "CO": "colorado",
    "CT": "connecticut", "DE": "delaware", "DC": "district of columbia", "FL": "florida", "GA": "georgia",
    "HI": "hawaii", "ID": "idaho", "IL": "illinois", "IN": "indiana", "IA": "iowa", "KS": "kansas",
    "KY": "kentucky", "LA": "louisiana", "ME": "maine", "MD": "maryland", "MA": "massachusetts",
    "MI": "michigan", "MN": "minnesota", "MS": "mississippi", "MO": "missouri", "MT": "montana",
    "NE": "nebraska", "NV": "nevada", "NH": "new hampshire", "NJ": "new jersey", "NM": "new mexico",
    "NY": "new york", "NC": "north carolina", "ND": "north dakota", "OH": "ohio", "OK": "oklahoma",
    "OR": "oregon", "PA": "pennsylvania", "RI": "rhode island", "SC": "south carolina", "SD": "south dakota",
    "TN": "tennessee", "TX": "texas", "UT": "utah", "VT": "vermont", "VA": "virginia", "WA": "washington",
    "WV": "west virginia", "WI": "wisconsin", "WY": "wyoming", "PR": "puerto rico",
}
_STATE_BY_NAME = {name: code for code, name in US_STATES.items()}
# compiled once: every question is read for every state's name
_STATE_NAME_PATTERNS = [(name, code, re.compile(rf"\b{name}\b")) for name, code in _STATE_BY_NAME.items()]
# two-letter codes that are also English words: a state only when written in capitals after "in"
_AMBIGUOUS_CODES = {"IN", "OR", "ME", "OK", "HI", "DE", "PA", "MA", "LA", "CO", "ID", "AL", "OH", "MD", "GA", "MO"}
# team nicknames that share a name with a state (a question naming the team means no state)
_STATE_NAMES_THAT_ARE_TEAMS = {"washington", "new york", "arizona", "carolina", "tennessee", "minnesota",
                               "indiana", "houston", "kansas", "florida", "utah", "texas"}

MONTHS = {
    "jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3, "apr": 4, "april": 4, "may": 5,
    "jun": 6, "june": 6, "jul": 7, "july": 7, "aug": 8, "august": 8, "sep": 9, "sept": 9, "september": 9,
    "oct": 10, "october": 10, "nov": 11, "november": 11, "dec": 12, "december": 12,
}
WEEKDAYS = {"monday": 0, "mon": 0, "tuesday": 1, "tue": 1, "tues": 1, "wednesday": 2, "wed": 2, "thursday": 3,
            "thu": 3, "thur": 3, "thurs": 3, "friday": 4, "fri": 4, "saturday": 5, "sat": 5, "sunday": 6, "sun": 6}
RELATIVE_DAYS = {"today": 0, "tonight": 0, "tonights": 0, "tomorrow": 1, "yesterday": -1, "tmrw": 1, "tmr": 1}

# --- cue words per category -------------------------------------------------------------------

CONVERT_CUES = {"convert", "conversion", "converted", "decimal", "american", "fractional", "fraction", "implied",
                "equivalent", "equals", "format", "moneyline", "us", "uk", "euro", "european"}
PAYOUT_CUES = {"pay", "payout", "pays", "paid", "return", "returns", "profit", "win", "winnings", "collect",
               "parlay", "parlays", "accumulator", "acca", "multi", "stake", "bet", "wager", "risk", "make",
               "payoff", "net"}
VIG_CUES = {"vig", "novig", "devig", "hold", "juice", "margin", "overround", "vigorish", "booksum", "fair",
            "true", "devigged", "unvigged", "vigless", "overrounds"}
MARKET_CUES = {"odds", "line", "lines", "spread", "spreads", "total", "totals", "moneyline", "ml", "favorite",
               "favourite", "favored", "favoured", "underdog", "dog", "consensus", "price", "prices", "handicap",
               "over", "under", "ou", "chance", "chances", "probability", "implied", "market", "markets", "hold",
               "vig", "novig", "juice", "fair", "h2h", "points", "pts", "priced", "favourites", "favorites",
               "overround", "margin"}
GAME_CUES = {"score", "scores", "final", "result", "results", "won", "win", "beat", "lost", "lose", "kickoff",
             "kick", "start", "starts", "time", "when", "where", "venue", "status", "play", "playing", "played",
             "schedule", "scheduled", "postponed", "cancelled", "canceled", "game", "match", "happen",
             "happened", "outcome", "winner", "kicks", "stadium", "live", "quarter", "halftime", "finish",
             "finished", "ended", "end"}
SLATE_CUES = {"games", "slate", "schedule", "fixtures", "fixture", "matchups", "matches", "playing", "on",
              "lineup", "card", "calendar"}
STATS_CUES = {"stats", "stat", "statistics", "yards", "yds", "yard", "touchdowns", "touchdown", "tds", "td",
              "passing", "rushing", "receiving", "receptions", "catches", "targets", "interceptions", "ints",
              "completions", "attempts", "sacks", "carries", "fantasy", "numbers", "line", "stats?", "rec",
              "rush", "pass", "throw", "threw", "ran", "caught", "averaging", "average", "epa", "fumbles",
              "points", "did", "perform", "performance", "season", "box"}
INJURY_CUES = {"injury", "injured", "injuries", "hurt", "questionable", "doubtful", "out", "practice",
               "practicing", "dnp", "news", "available", "availability", "active", "inactive", "report", "ir",
               "healthy", "health", "update", "updates", "status", "limited", "playing", "play", "suspended",
               "designation", "ankle", "knee", "hamstring", "concussion", "illness", "hip", "shoulder"}
REFERENCE_CUES = {"mean", "means", "meaning", "define", "definition", "explain", "explained", "rule", "rules",
                  "legal", "law", "laws", "tax", "taxes", "taxed", "taxable", "irs", "w2g", "withholding",
                  "exclusion", "helpline", "regulator", "licensed", "license", "allowed", "age", "void",
                  "push", "pushes", "term", "glossary", "difference", "work", "works", "calculate",
                  "calculated", "policy", "policies", "deduct", "deduction", "report", "legalized", "legalised",
                  "regulated", "gamstop", "settle", "settled", "settlement", "cancelled", "abandoned", "overtime"}
LAW_CUES = {"legal", "law", "laws", "legalized", "legalised", "licensed", "license", "regulator", "regulated",
            "allowed", "illegal", "legislation"}
TAX_CUES = {"tax", "taxes", "taxed", "taxable", "irs", "w2g", "withholding", "deduct", "deduction", "1099"}
FEDERAL_CUES = {"irs", "federal", "w2g", "1099"}
STRATEGY_CUES = {"strategy", "strategies", "system", "systems", "martingale", "fibonacci", "dalembert", "labouchere",
                 "paroli", "kelly", "fade", "chase", "chasing", "hedge", "hedging", "arbitrage", "arb", "arbs",
                 "matched", "middling", "middle", "teaser", "teasers", "progression", "method"}

# words that ask about a way of betting as such (a strategy), whatever its name
STRATEGY_GENERIC = {"strategy", "strategies", "system", "systems", "method", "methods", "progression", "staking",
                    "approach", "plan", "tactic", "tactics"}

# words that ask about a strategy as a strategy (does it work, is it worth it)
STRATEGY_ASKS = {"work", "works", "worth", "profitable", "legit", "effective", "beat", "use", "using", "useful", "good",
                 "bad", "myth", "verdict", "evidence", "registry", "really", "best"}

DEVIG_ALIASES = {"multiplicative": "multiplicative", "proportional": "multiplicative", "additive": "additive",
                 "power": "power", "shin": "shin", "shins": "shin", "odds ratio": "odds_ratio",
                 "odds_ratio": "odds_ratio", "oddsratio": "odds_ratio"}
assert set(DEVIG_ALIASES.values()) == set(METHODS)
_DEVIG_ALIAS_PATTERNS = [(re.compile(rf"\b{alias}\b"), method) for alias, method in DEVIG_ALIASES.items()]

MARKET_TYPE_CUES = {
    "spreads": {"spread", "spreads", "handicap", "ats", "cover", "points", "pts", "line"},
    "totals": {"total", "totals", "over", "under", "ou"},
    "h2h": {"moneyline", "ml", "h2h", "outright", "1x2", "money"},
}

# --- refusals ---------------------------------------------------------------------------------

RefusalReason = Literal["prediction", "advice", "non_public", "personal_finance", "off_topic"]

_PREDICTION = re.compile(
    r"\b(who|which team|what team|which side)\s+(will|would|'ll|is going to|are going to|gonna|should|to)\s+(win|cover|beat|take|back|bet)"
    r"|\bwill\s+(the\s+)?[a-z0-9'. ]{1,40}?\s+(win|cover|beat|lose|score|go over|go under|hit|make the playoffs)\b"
    r"|\bgoing to (win|cover|lose|score)\b|\bgonna (win|cover|lose|hit)\b"
    r"|\bpredict|\bprojection|\bforecast|\bpicks?\b(?! ?'?em)|\blocks? of the (day|week|night)\b|\block\b"
    r"|\bgive me (a|an|some|your|the)\b[a-z' ]{0,20}\b(parlay|pick|bet|lock|play|tip|winner)s?\b"
    r"|\b(bet|pick|play|parlay|lock|tip)s? of the (day|week|night|weekend|month|season)\b"
    r"|\bbest bets?\b|\bbest (parlay|pick|play|wager|value)\b|\bsure (thing|bet|win)\b|\bguarantee"
    r"|\btips?\b|\btipster|\bfree money\b|\bcan'?t lose\b|\bwho wins\b|\bwho'?s gonna\b|\bwho is winning tonight\b"
    r"|\b(value|edge) (bet|play|pick)s?\b|\bis there (value|an edge)\b|\bhammer\b|\bsmash\b|\bfade\b(?= (the|him|them))"
    r"|\bwhat (will|would) (the )?(score|final score|result) be\b|\bexpected score\b|\bbeat the (bookies|books|sportsbook)\b"
    r"|\bwhat should i (bet|take|play|pick|parlay)\b|\bwhich (bet|side|team|prop|player|parlay) should\b"
    r"|\b(good|smart|safe|best) bet\b|\bworth (a )?bet(ting)?\b|\bshould i (bet|take|back|wager|parlay|lay|tail|fade|play|hedge|cash out|stake)\b"
)
_ADVICE = re.compile(
    r"\bhow much should i (bet|wager|stake|put|risk|gamble)\b|\bshould i (bet|gamble|wager)\b"
    r"|\bhow (do i|to|can i) (win|make money|get rich|beat)\b|\bmake (a living|money|a profit) (from|betting|gambling)\b"
    r"|\bwhat('s| is) the best (sportsbook|book|bookie|site|app)\b|\bwhich (sportsbook|book|bookie|site|app) (is best|should)\b"
)
_NON_PUBLIC = re.compile(
    r"\binsider\b|\binside (info|information)\b|\bsharp money\b|\bwhere (is|are) the (sharps|sharp money|public)\b"
    r"|\bbet(ting)? (splits|percentages?)\b|\bpublic (money|betting|is on)\b|\bleaked?\b|\bfixed\b|\brigged\b"
    r"|\b(draftkings|fanduel|betmgm|caesars|bet365|pointsbet|bovada|pinnacle|betrivers|fanatics|williamhill|"
    r"william hill|betway|unibet|ladbrokes|paddy power|hard rock)\b[a-z' ]{0,30}\b(odds|price|prices|line|lines|spread|"
    r"total|moneyline|offering|has|have|paying)\b"
    r"|\b(odds|price|prices|line|lines|spread|total|moneyline)\b[a-z' ]{0,20}\b(at|on) (draftkings|fanduel|betmgm|caesars|"
    r"bet365|pointsbet|bovada|pinnacle|betrivers|fanatics)\b"
    r"|\bwhich (book|sportsbook|bookie)s? (has|have|offers?)\b|\bbest (odds|price|line) (for|on)\b"
    r"|\bmy (account|balance|bets?|bet history|winnings|losses)\b|\bcheat\b|\bhack\b"
)
_PERSONAL_FINANCE = re.compile(
    r"\b(mortgage|loans?|borrow|retirement|401k|ira account|pension|invest|investing|investment|savings|stocks?|"
    r"crypto|bitcoin|ethereum|forex|credit card debt|debt|rent money|payday)\b"
)
_LEAGUE_AWARE = re.compile(
    r"\bmy (fantasy )?(league|team|roster|lineup|squad|matchup|opponent)\b|\bstart or sit\b|\bstart/sit\b"
    r"|\bsit or start\b|\bwaiver (wire|claim|pickup)s?\b|\bwho should i (start|sit|drop|add|pick up|trade)\b"
    r"|\bshould i (start|sit|drop|add|trade)\b|\bmy (draft|keeper|dynasty|faab)\b|\bleague standings\b"
)

# words that carry no entity: dropped before phrases are looked up in the search index
STOPWORDS = {
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "for", "by", "with", "vs", "v", "versus", "is", "are",
    "was", "were", "be", "been", "being", "what", "whats", "what's", "which", "who", "whom", "whose", "how", "why",
    "when", "where", "do", "does", "did", "done", "can", "could", "would", "should", "will", "shall", "may", "might",
    "i", "me", "my", "we", "us", "our", "you", "your", "it", "its", "it's", "this", "that", "these", "those",
    "there", "their", "they", "them", "he", "him", "his", "she", "her", "hers", "from", "about", "as", "if", "than",
    "then", "so", "but", "not", "no", "yes", "any", "all", "some", "much", "many", "more", "most", "get", "got",
    "give", "tell", "show", "find", "look", "up", "out", "into", "over", "under", "vs.", "please", "pls", "plz",
    "thanks", "thx", "hey", "hi", "hello", "just", "now", "right", "currently", "current", "latest", "last", "next",
    "this", "week", "weeks", "day", "days", "game", "games", "match", "matches", "team", "teams", "player",
    "players", "season", "year", "nfl", "epl", "premier", "league", "serie", "football", "soccer", "sport", "sports",
    "am", "pm", "et", "est", "pt", "ct", "utc", "whole", "full", "one", "two", "three", "new", "know", "need",
    "want", "like", "says", "say", "said", "according", "per", "each", "every", "also", "too", "very", "really",
    "lol", "im", "i'm", "ok", "okay", "guys", "anyone", "someone", "gonna", "wanna", "go", "going", "has", "have",
    "had", "having", "against", "between", "vs", "@", "ago", "than", "since", "before", "after", "during", "year's",
    "home", "away", "side", "sides", "number", "numbers", "info", "information", "details", "detail", "quick",
    "question", "help", "tonight", "today", "tomorrow", "yesterday", "morning", "afternoon", "evening", "night",
    "point", "yesterdays", "todays", "tonights", "an", "ur", "u", "r", "y", "n", "team's", "s", "t", "him",
}
_CUE_WORDS = (CONVERT_CUES | PAYOUT_CUES | VIG_CUES | MARKET_CUES | GAME_CUES | SLATE_CUES | STATS_CUES | INJURY_CUES
              | REFERENCE_CUES | STRATEGY_CUES | STRATEGY_GENERIC | STRATEGY_ASKS | set(WEEKDAYS) | set(MONTHS) | set(RELATIVE_DAYS))


@dataclass(frozen=True)
class PriceMention:
    value: Decimal  # as written: American (+150), decimal (2.5) or fractional (5/2 as 2.5)
    format: OddsFormat
    text: str  # how the engine read it, e.g. "+150", "5/2", "2.50" (its own rendering, not the question's)
    status: Literal["win", "push", "void"] = "win"


@dataclass
class Reading:
    """What was read out of one question (held for the request only, never stored)."""

    words: list[str]
    wordset: set[str]
    prices: list[PriceMention] = field(default_factory=list)
    stakes: list[Decimal] = field(default_factory=list)
    probabilities: list[Decimal] = field(default_factory=list)
    dates: list[date] = field(default_factory=list)
    weekday: int | None = None
    relative_day: int | None = None
    week: int | None = None
    season: int | None = None
    states: list[str] = field(default_factory=list)
    devig_method: str | None = None
    target_format: PriceFormat | None = None
    market_types: set[str] = field(default_factory=set)
    phrases: list[str] = field(default_factory=list)  # candidate entity phrases, longest first
    refusal: RefusalReason | None = None
    league_aware: bool = False
    library_text: str = ""  # the words to search the library with (numbers and stopwords dropped)
    competition: str | None = None
    state_words: set[str] = field(default_factory=set)  # words read as a US state ("texas"): never a team

    def cues(self, words: set[str]) -> int:
        return len(self.wordset & words)


_DASHES = str.maketrans({"\u2212": "-", "\u2013": "-", "\u2014": "-", "\u2018": "'", "\u2019": "'", "\u201c": '"',
                         "\u201d": '"', "\u00bd": ".5"})
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def normalise(question: str) -> str:
    """NFKC, no accents or control characters, dashes and quotes made plain; case kept."""
    if question.isascii():  # already NFKC, no accents, no dashes or quotes to make plain
        return _CONTROL.sub(" ", question)
    text = unicodedata.normalize("NFKC", question).translate(_DASHES)
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    return _CONTROL.sub(" ", text)


# --- numbers ----------------------------------------------------------------------------------

_MONEY = r"(?:\$|usd ?|£|€|eur ?|gbp ?)"
_STAKE = re.compile(
    rf"{_MONEY}\s?(\d{{1,9}}(?:,\d{{3}})*(?:\.\d{{1,2}})?)\s?(k\b)?"
    r"|\b(\d{1,9}(?:\.\d{1,2})?)\s?(?:dollars?|bucks?|usd|pounds?|quid|euros?|units?|u)\b"
    r"|\b(?:stake|staking|bet|betting|wager|wagering|risk|risking|put|putting|lay|laying|parlay)\s+(?:of\s+)?(\d{1,9}(?:\.\d{1,2})?)\b(?!\s*(?:/|%|to\b|-\d))"
)
_PERCENT = re.compile(r"(?<![\d.])(\d{1,3}(?:\.\d+)?)\s?(?:%|percent\b|pct\b)")
_PROB_DECIMAL = re.compile(r"\b(?:probability|chance|prob|p)\s*(?:of|is|=|:)?\s*(0?\.\d+)\b")
_FRACTIONAL = re.compile(r"(?<![\d/.$])(\d{1,4})\s?(?:/|-to-| to )\s?(\d{1,4})(?![\d/])")
_EVENS = re.compile(r"\b(evens|even money|evs|even odds|pick'?em|pk)\b")
_AMERICAN = re.compile(r"(?<![\w.$])([+-])\s?(\d{3,6})(?![\d.%])|\b(plus|minus)\s(\d{3,6})\b")
_DECIMAL = re.compile(r"(?<![\w.$/+-])(\d{1,4}\.\d{1,3})(?![\d%/])(?!\s?(?:points|pts|point|yards|yds|percent|%))")
_PUSH_LEG = re.compile(r"(push|pushed|void|voided)")

_ISO_DATE = re.compile(r"\b(20\d\d)-(\d\d)-(\d\d)\b")
_SLASH_DATE = re.compile(r"\b(\d{1,2})/(\d{1,2})/(20\d\d|\d\d)\b")
_MONTH_DATE = re.compile(
    r"\b(jan|january|feb|february|mar|march|apr|april|may|jun|june|jul|july|aug|august|sep|sept|september|oct|"
    r"october|nov|november|dec|december)\.?\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(20\d\d))?\b"
    r"|\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(jan|january|feb|february|mar|march|apr|april|may|jun|june|jul|july|"
    r"aug|august|sep|sept|september|oct|october|nov|november|dec|december)\.?(?:,?\s+(20\d\d))?\b"
)
_WEEK = re.compile(r"\b(?:week|wk|wk\.|gameweek|matchweek|round)\s?#?(\d{1,2})\b|\b(\d{1,2})(?:st|nd|rd|th) week\b")
_SEASON = re.compile(r"\b(20[0-4]\d)(?:[-/](?:20)?\d\d)?\b")
_WORD = re.compile(r"[a-z0-9][a-z0-9'.]*")


def _decimal(text: str) -> Decimal | None:
    try:
        return Decimal(text.replace(",", ""))
    except InvalidOperation:
        return None


def _remove(text: str, span: tuple[int, int]) -> str:
    """The text with a span blanked (so one number is read once)."""
    return text[: span[0]] + " " * (span[1] - span[0]) + text[span[1]:]


def _read_numbers(text: str, reading: Reading) -> str:
    """Dates, weeks, stakes, probabilities and prices, in that order, each blanked once read."""
    for m in _ISO_DATE.finditer(text):
        try:
            reading.dates.append(date(int(m[1]), int(m[2]), int(m[3])))
        except ValueError:
            continue
        text = _remove(text, m.span())
    for m in _SLASH_DATE.finditer(text):
        year = int(m[3]) + (2000 if len(m[3]) == 2 else 0)
        try:
            reading.dates.append(date(year, int(m[1]), int(m[2])))  # US order: month/day/year
        except ValueError:
            continue
        text = _remove(text, m.span())
    for m in _MONTH_DATE.finditer(text):
        month, day, year = (m[1], m[2], m[3]) if m[1] else (m[5], m[4], m[6])
        try:
            # a date without a year: kept with year 1, resolved against the data's calendar later
            reading.dates.append(date(int(year) if year else 1, MONTHS[month], int(day)))
        except ValueError:
            continue
        text = _remove(text, m.span())
    for m in _WEEK.finditer(text):
        reading.week = int(m[1] or m[2])
        text = _remove(text, m.span())
    for m in _STAKE.finditer(text):
        raw = m[1] or m[3] or m[4]
        amount = _decimal(raw) if raw else None
        if amount is not None and amount > 0:
            reading.stakes.append(amount * (1000 if m[2] else 1))
            text = _remove(text, m.span())
    for m in _SEASON.finditer(text):
        reading.season = int(m[1])
        text = _remove(text, m.span())
    for m in _PERCENT.finditer(text):
        p = _decimal(m[1])
        if p is not None and 0 < p < 100:
            reading.probabilities.append(p / 100)
            text = _remove(text, m.span())
    for m in _PROB_DECIMAL.finditer(text):
        p = _decimal(m[1])
        if p is not None and 0 < p < 1:
            reading.probabilities.append(p)
            text = _remove(text, m.span())
    found: list[tuple[int, PriceMention]] = []
    for m in _EVENS.finditer(text):
        found.append((m.start(), PriceMention(Decimal(1), "fractional", "evens")))
        text = _remove(text, m.span())
    for m in _FRACTIONAL.finditer(text):
        num, den = int(m[1]), int(m[2])
        if num > 0 and den > 0 and den <= 1000:
            found.append((m.start(), PriceMention(Decimal(num) / Decimal(den), "fractional", f"{num}/{den}")))
            text = _remove(text, m.span())
    for m in _AMERICAN.finditer(text):
        sign = m[1] or ("+" if m[3] == "plus" else "-")
        digits = int(m[2] or m[4])
        if digits >= 100:
            value = Decimal(digits) if sign == "+" else -Decimal(digits)
            found.append((m.start(), PriceMention(value, "american", f"{'+' if value > 0 else ''}{value}")))
            text = _remove(text, m.span())
    for m in _DECIMAL.finditer(text):
        value = _decimal(m[1])
        if value is not None and Decimal("1") < value <= Decimal("1000"):
            found.append((m.start(), PriceMention(value, "decimal", m[1])))
            text = _remove(text, m.span())
    found.sort(key=lambda item: item[0])
    for position, mention in found:
        after = text[position: position + 40]
        status = _PUSH_LEG.search(after.split(",")[0]) if "(" in after[:12] or ":" in after[:12] else None
        if status is not None:
            mention = PriceMention(mention.value, mention.format, mention.text,
                                   "push" if status[1].startswith("push") else "void")
        reading.prices.append(mention)
    return text


def _read_states(original: str, lower: str, reading: Reading) -> None:
    for name, code, pattern in _STATE_NAME_PATTERNS:
        if name not in lower:  # the cheap test first: most questions name no state
            continue
        for m in pattern.finditer(lower):
            tail = lower[m.end(): m.end() + 14]
            # "New York Giants", "Washington Commanders", "Arizona Cardinals": a team, not a state
            if name in _STATE_NAMES_THAT_ARE_TEAMS and re.match(r"\s+[a-z]", tail) and not re.match(
                    r"\s+(state|sports|law|tax|residents?|legal|betting)\b", tail):
                continue
            if name == "washington" and "dc" in lower:
                continue
            if code not in reading.states:
                reading.states.append(code)
            reading.state_words |= set(name.split())
    for m in re.finditer(r"\b([A-Z]{2})\b", original):
        code = m[1]
        if code not in US_STATES:
            continue
        before = original[max(0, m.start() - 9): m.start()].lower()
        if code in _AMBIGUOUS_CODES and not re.search(r"\b(in|state|of|from)\s+$", before):
            continue
        if code not in reading.states:
            reading.states.append(code)


def _read_cues(lower: str, reading: Reading) -> None:
    for pattern, method in _DEVIG_ALIAS_PATTERNS:
        if pattern.search(lower):
            reading.devig_method = method
            break
    for fmt, names in (("american", r"american|moneyline odds|moneyline|us odds|us format|us"),
                       ("decimal", r"decimal|european odds|euro odds|european"),
                       ("fractional", r"fractional|fraction|fractions|uk odds|british odds|uk"),
                       ("implied", r"implied probability|implied odds|implied|probability|percent|percentage|chance")):
        # the format asked for follows "to", "in", "as" or "into"; a format named elsewhere is the input's
        if re.search(rf"\b(to|in|as|into)\s+(an?\s+|the\s+)?({names})\b", lower):
            reading.target_format = fmt  # type: ignore[assignment]
            break
    if reading.target_format is None and re.search(r"\bimplied|\bprobability\b|\bpercentage\b|\bchance\b", lower):
        reading.target_format = "implied"
    for market_type, cues in MARKET_TYPE_CUES.items():
        if reading.wordset & cues:
            reading.market_types.add(market_type)
    if re.search(r"\bover/under\b|\bo/u\b|\bover under\b", lower):
        reading.market_types.add("totals")
    if "totals" in reading.market_types and not reading.wordset & (MARKET_TYPE_CUES["spreads"] - {"points", "pts", "line"}):
        reading.market_types.discard("spreads")  # "total points line" is the total
    if re.search(r"\bpoint spread\b|\bagainst the spread\b", lower):
        reading.market_types.add("spreads")
    if re.search(r"\bpremier league\b|\bepl\b|\benglish\b", lower):
        reading.competition = "epl"
    elif re.search(r"\bserie a\b|\bitalian\b", lower):
        reading.competition = "serie_a"
    elif re.search(r"\bnfl\b", lower):
        reading.competition = "nfl"


def _phrases(words: list[str]) -> list[str]:
    """Runs of content words (not stopwords, cue words or numbers) and their 1-3 word stretches,
    longest first: the candidates for a team, player or game name."""
    runs: list[list[str]] = [[]]
    for word in words:
        bare = word.strip("'.")
        if bare.endswith("'s"):
            bare = bare[:-2]
        if not bare or bare in STOPWORDS or bare in _CUE_WORDS or not any(ch.isalpha() for ch in bare) or len(bare) < 2:
            if runs[-1]:
                runs.append([])
            continue
        runs[-1].append(bare.replace("'", "").replace(".", ""))
    out: list[str] = []
    for run in runs:
        for size in (2, 1):  # a name of three words is found by two of them ("kansas city")
            for i in range(0, len(run) - size + 1):
                phrase = " ".join(run[i: i + size])
                if phrase not in out:
                    out.append(phrase)
    out.sort(key=lambda p: -len(p.split()))
    return out[:10]


def read(question: str) -> Reading:
    """Everything the engine reads out of a question (see the module doc)."""
    original = normalise(question)
    lower = original.lower()
    words = _WORD.findall(lower.replace("/", " / "))
    words = [w.rstrip(".") for w in words]
    reading = Reading(words=words, wordset={w.strip("'.") for w in words} | {w[:-2] for w in words if w.endswith("'s")})
    if "no vig" in lower or "no-vig" in lower or "de-vig" in lower or "de vig" in lower:
        reading.wordset.add("novig")
    if "w-2g" in lower or "w2-g" in lower:
        reading.wordset.add("w2g")
    if re.search(r"\b(can|may) (i|you|we|people|someone) (legally )?(bet|wager|gamble)\b|\bwhere (can|may) (i|you) (bet|wager)\b"
                 r"|\ballowed to (bet|wager|gamble)\b", lower):
        reading.wordset.add("legal")  # asked whether betting is allowed: a question of law
    rest = _read_numbers(lower, reading)
    legs = re.search(r"\b(\d{1,2})[- ]?(?:team|leg|fold|way)s?\b", lower)
    if legs and len(reading.prices) == 1 and re.search(r"\b(each|apiece|per leg|every leg|all)\b", lower) and (
            "parlay" in reading.wordset or "accumulator" in reading.wordset or "acca" in reading.wordset):
        reading.prices = reading.prices * max(2, min(int(legs[1]), 30))
    _read_states(original, lower, reading)
    _read_cues(lower, reading)
    for word in words:
        if word in WEEKDAYS and reading.weekday is None and not (word == "sun" and "sun " not in lower):
            reading.weekday = WEEKDAYS[word]
        if word in RELATIVE_DAYS and reading.relative_day is None:
            reading.relative_day = RELATIVE_DAYS[word]
    if _LEAGUE_AWARE.search(lower):
        reading.league_aware = True
    elif _PERSONAL_FINANCE.search(lower):
        reading.refusal = "personal_finance"
    elif _NON_PUBLIC.search(lower):
        reading.refusal = "non_public"
    elif _ADVICE.search(lower):
        reading.refusal = "advice"
    elif _PREDICTION.search(lower):
        reading.refusal = "prediction"
    rest_words = _WORD.findall(rest.replace("/", " / "))
    reading.phrases = _phrases([w for w in rest_words if w not in reading.state_words])
    reading.library_text = " ".join(w for w in rest_words if w not in STOPWORDS and not any(c.isdigit() for c in w))
    return reading
