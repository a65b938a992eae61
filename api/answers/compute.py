"""Compute an answer's figures: the odds maths (calc.run, the same code as POST
/v1/calculations) on the numbers in the question, and the read models (games, markets, players,
the library) for the entities it names. Each figure carries its value, display, unit, as_of,
source and the citation it comes from; market and game figures carry their Wire topic.

No formula is written here: conversions, payouts, parlays and margin removal run through
calc.run; a market's consensus and no-vig probabilities are the projector's (read through
api.resources.markets); stat lines through api.resources.stats.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import asyncpg

from api import calc_problems
from api.answers import reads
from api.answers import understand as u
from api.answers.categories import Category
from api.answers.decide import Entity, Named
from api.answers.facts import Facts, Source, Value
from api.queries import library as library_sql
from api.queries import markets as markets_sql
from api.queries import players as players_sql
from api.queries import stats as stats_sql
from api.resources.common import utc
from api.resources.markets import market_line
from api.resources.odds_display import percent
from api.resources.stats import stat_line
from calc import models as cm
from calc.run import SOURCE as ODDS_SOURCE
from domain import formula_cards as cards
from domain.devig import DEFAULT_METHOD
from schemas.read_models import GameRecord, StatLineRecord, column_list
from schemas.wire import game_topic, market_topic

# how an answer names the game a stat line is from
_GAME_NAMED = column_list(GameRecord, "g.", only=("id", "name", "season", "week"))

EASTERN = ZoneInfo("America/New_York")
MARKET_NAMES = {"h2h": "moneyline", "spreads": "spread", "totals": "total"}
# what "next" or "last" mean when nothing else says which game: the upcoming game if one is
# within this many days, else the latest one played
NEAR_DAYS = 7


class NotAnswerable(Exception):
    """The question is in scope but the data cannot answer it (nothing found): a refusal of
    reason `not_found` saying what was looked for, never what was asked."""

    def __init__(self, looked_for: str) -> None:
        super().__init__(looked_for)
        self.looked_for = looked_for


# ---- formulas and numbers ---------------------------------------------------------------------


def formula_source(card_ref: str, as_of: datetime) -> Source:
    card = cards.get(card_ref)
    name = card.name if card is not None else card_ref
    return Source(key=f"formula:{card_ref}", kind="formula", label=f"Formula card {card_ref}: {name}",
                  source=ODDS_SOURCE, as_of=as_of, ref=card_ref, url=f"/v1/formulas/{card_ref}",
                  formulas=(card_ref,))


def _calc_source(facts: Facts, calc: Any, as_of: datetime) -> str:
    """Cite the card a calculation used first (its others are listed in `formulas`)."""
    first = facts.cite(formula_source(calc.formulas[0], as_of))
    if len(calc.formulas) > 1:
        src = facts.sources[first]
        facts.sources[first] = Source(**{**src.__dict__, "formulas": tuple(calc.formulas)})
    return first


def _odds_arg(p: u.PriceMention) -> tuple[Any, str]:
    if p.format == "fractional":
        return ("evens" if p.text == "evens" else p.text), "fractional"
    if p.format == "american":
        return str(p.value), "american"
    return str(p.value), "decimal"


def _same_format(prices: Sequence[u.PriceMention]) -> tuple[list[Any], str]:
    """Prices as one calculation's inputs: in their own format when all share one, else each
    converted to decimal by the convert calculation."""
    formats = {p.format for p in prices}
    if len(formats) == 1:
        fmt = formats.pop()
        return [_odds_arg(p)[0] for p in prices], fmt
    out = []
    for p in prices:
        arg, fmt = _odds_arg(p)
        conv = calc_problems.calculate("convert", cm.ConvertRequest(price=arg, format=fmt))
        out.append(conv.result.decimal)
    return out, "decimal"


def _money(x: float) -> str:
    return f"${x:,.2f}"


def _pct(x: float) -> str:
    return f"{x * 100:.2f}%"


def _dec(x: float) -> str:
    return f"{x:.2f}"


def _us(x: float | None) -> str:
    if x is None:
        return "n/a"
    whole = round(x)
    if whole == -100:
        whole = 100
    return f"+{whole}" if whole > 0 else str(whole)


# ---- 1. odds conversion -------------------------------------------------------------------------


def conversion(r: u.Reading, now: datetime) -> Facts:
    facts = Facts(Category.ODDS_CONVERSION, wagering=True)
    price = r.prices[0]
    arg, fmt = _odds_arg(price)
    calc = calc_problems.calculate("convert", cm.ConvertRequest(price=arg, format=fmt), as_of=now)
    cite = _calc_source(facts, calc, now)
    res = calc.result
    facts.words.update(input=price.text, input_format=fmt, target=r.target_format)
    facts.add(Value("decimal", "decimal_odds", "Decimal odds", res.decimal, res.display.decimal, "decimal_odds",
                    now, ODDS_SOURCE, cite))
    facts.add(Value("american", "american_odds", "American odds", res.american, res.display.american,
                    "american_odds", now, ODDS_SOURCE, cite))
    fractional = Decimal(res.fractional.split("/")[0]) / Decimal(res.fractional.split("/")[1])
    facts.add(Value("fractional", "fractional_odds", "Fractional odds", float(fractional), res.fractional,
                    "fractional_odds", now, ODDS_SOURCE, cite))
    facts.add(Value("implied", "implied_probability", "Implied probability", res.implied, res.display.implied,
                    "probability", now, ODDS_SOURCE, cite))
    if fmt == "american" and price.value > 0 or fmt != "american":
        pass
    if len(r.prices) > 1:
        facts.assume("price", f"Converted the first price given ({price.text}); ask about one price at a time.")
    return facts


# ---- 2. payout and parlay -----------------------------------------------------------------------


def payout(r: u.Reading, now: datetime) -> Facts:
    facts = Facts(Category.PAYOUT, wagering=True)
    stake = r.stakes[0] if r.stakes else Decimal(100)
    if not r.stakes:
        facts.assume("stake", "No stake was given: the figures are for a stake of $100.")
    facts.words["stake"] = _money(float(stake))
    facts.add(Value("stake", "stake", "Stake", float(stake), _money(float(stake)), "money", now, ODDS_SOURCE,
                    "formula:bet.payout@1" if len(r.prices) == 1 else "formula:bet.parlay@1"))
    parlay = len(r.prices) >= 2
    if parlay:
        odds, fmt = _same_format(r.prices)
        legs = [cm.ParlayLeg(odds=o, status="push" if p.status == "push" else "void" if p.status == "void" else "open")
                for o, p in zip(odds, r.prices)]
        calc = calc_problems.calculate("parlay", cm.ParlayRequest(legs=legs, stake=str(stake), format=fmt), as_of=now)
        cite = _calc_source(facts, calc, now)
        res = calc.result
        facts.words.update(parlay=True, legs=[p.text for p in r.prices], removed=list(res.legs_removed),
                           counted=len(res.legs_counted))
        facts.add(Value("decimal", "decimal_odds", "Parlay decimal odds", res.decimal_odds, _dec(res.decimal_odds),
                        "decimal_odds", now, ODDS_SOURCE, cite))
        if res.american_odds is not None:
            facts.add(Value("american", "american_odds", "Parlay American odds", res.american_odds,
                            _us(res.american_odds), "american_odds", now, ODDS_SOURCE, cite))
        facts.add(Value("payout", "payout", "Payout (stake included)", res.payout, _money(res.payout), "money", now,
                        ODDS_SOURCE, cite))
        facts.add(Value("profit", "profit", "Profit", res.profit, _money(res.profit), "money", now, ODDS_SOURCE, cite))
        facts.add(Value("implied", "implied_probability", "Implied probability of every leg winning",
                        res.implied_probability, _pct(res.implied_probability), "probability", now, ODDS_SOURCE, cite))
    else:
        price = r.prices[0]
        arg, fmt = _odds_arg(price)
        calc = calc_problems.calculate("payout", cm.PayoutRequest(odds=arg, stake=str(stake), format=fmt), as_of=now)
        cite = _calc_source(facts, calc, now)
        res = calc.result
        facts.words.update(parlay=False, price=price.text)
        facts.add(Value("decimal", "decimal_odds", "Decimal odds", res.decimal_odds, _dec(res.decimal_odds),
                        "decimal_odds", now, ODDS_SOURCE, cite))
        facts.add(Value("payout", "payout", "Payout (stake included)", res.payout, _money(res.payout), "money", now,
                        ODDS_SOURCE, cite))
        facts.add(Value("profit", "profit", "Profit", res.profit, _money(res.profit), "money", now, ODDS_SOURCE, cite))
        facts.add(Value("break_even", "break_even_probability", "Break-even probability", res.break_even_probability,
                        _pct(res.break_even_probability), "probability", now, ODDS_SOURCE, cite))
    stake_value = facts.values["stake"]
    facts.values["stake"] = Value(**{**stake_value.__dict__, "cite": next(iter(facts.sources))})
    return facts


# ---- 3. no-vig and hold of prices given ----------------------------------------------------------


def no_vig(r: u.Reading, now: datetime) -> Facts:
    facts = Facts(Category.NO_VIG_HOLD, wagering=True)
    method = r.devig_method or DEFAULT_METHOD
    if r.devig_method is None:
        facts.assume("devig_method", f"Removed the margin with the {method} method (the default); "
                                     "name another (additive, power, shin, odds ratio) to use it.")
    prices = r.prices[:30]
    odds, fmt = _same_format(prices)
    calc = calc_problems.calculate("devig", cm.DevigRequest(odds=odds, method=method, format=fmt), as_of=now)
    cite = _calc_source(facts, calc, now)
    res = calc.result
    facts.words.update(method=method, prices=[p.text for p in prices], in_range=res.in_range,
                       messages=list(res.messages))
    facts.add(Value("hold", "hold", "Hold", res.hold, _pct(res.hold), "probability", now, ODDS_SOURCE, cite))
    facts.add(Value("overround", "overround", "Overround", res.overround, _pct(res.overround), "probability", now,
                    ODDS_SOURCE, cite))
    for i, (p, prob) in enumerate(zip(prices, res.probabilities)):
        facts.add(Value(f"p{i}", "no_vig_probability", f"No-vig probability of {p.text}", prob, _pct(prob),
                        "probability", now, ODDS_SOURCE, cite, selection_id=str(i)))
        fair = res.fair_odds[i]
        if fair is not None:
            facts.add(Value(f"fair{i}", "fair_odds", f"Fair decimal odds of {p.text}", fair,
                            f"{_dec(fair)} ({_us(res.fair_odds_american[i])})", "decimal_odds", now, ODDS_SOURCE, cite,
                            selection_id=str(i)))
    return facts


# ---- games: which one a question means ---------------------------------------------------------


def _kickoff(row: Mapping[str, Any]) -> datetime:
    return utc(row["kickoff_sort"])  # type: ignore[return-value]


def _local_day(row: Mapping[str, Any]) -> date:
    return _kickoff(row).astimezone(EASTERN).date() if row["kickoff_at"] else row["kickoff_date"]


def game_label(row: Mapping[str, Any]) -> str:
    day = _local_day(row)
    return f"{row['away_name']} at {row['home_name']}, {day:%a %b} {day.day}, {day.year}"


async def anchor(conn: asyncpg.Connection, schema: str, now: datetime) -> tuple[datetime, bool]:
    """The time "today" means in this dataset: now, when games are within a week of now; else
    the newest game day before now (the data's own calendar: a sandbox or a finished season)."""
    before, after = await reads.game_days(conn, schema, now)
    if after is not None and after - now <= timedelta(days=NEAR_DAYS):
        return now, False
    if before is not None and now - before <= timedelta(days=NEAR_DAYS):
        return now, False
    if before is not None:
        return before, True
    if after is not None:
        return after, True
    return now, False


def day_of(r: u.Reading, at: datetime) -> date | None:
    """The day a question names: a date, today/tomorrow/yesterday, or a weekday (the nearest
    one on or after the anchor's day within the week, else the last one before it)."""
    local = at.astimezone(EASTERN).date()
    for d in r.dates:
        if d.year == 1:  # no year given: the nearest such day to the anchor
            options = []
            for year in (local.year - 1, local.year, local.year + 1):
                try:
                    options.append(d.replace(year=year))
                except ValueError:
                    continue
            return min(options, key=lambda x: abs((x - local).days)) if options else None
        return d
    if r.relative_day is not None:
        return local + timedelta(days=r.relative_day)
    if r.weekday is not None:
        delta = (r.weekday - local.weekday()) % 7
        if delta > 3:  # a weekday more than three days ahead is the last one (as people say "Sunday")
            delta -= 7
        return local + timedelta(days=delta)
    return None


def day_bounds(day: date) -> tuple[datetime, datetime]:
    start = datetime.combine(day, time(0), EASTERN)
    return start.astimezone(UTC), (start + timedelta(days=1)).astimezone(UTC)


async def find_game(conn: asyncpg.Connection, schema: str, r: u.Reading, named: Named, now: datetime,
                    facts: Facts, want_markets: bool) -> Mapping[str, Any]:
    teams = named.teams[:2]
    at, shifted = await anchor(conn, schema, now)
    day = day_of(r, at)
    day_from = day_to = None
    if day is not None:
        day_from, day_to = day_bounds(day)
        # a game listed by its date only sorts at local midnight: a day either side holds it
        day_from, day_to = day_from - timedelta(hours=12), day_to + timedelta(hours=12)
    season = str(r.season) if r.season is not None and r.week is not None else None
    rows = await reads.games_for(
        conn, schema, team_ids=[t.id for t in teams], both=len(teams) >= 2, competition=None,
        season=season, week=r.week, day_from=day_from, day_to=day_to,
    )
    if r.season is not None and r.week is None:
        rows = [g for g in rows if g["season"] == str(r.season) or _kickoff(g).year == r.season] or rows
    if not rows:
        names = " and ".join(t.name for t in teams)
        raise NotAnswerable(f"a game of {names}" + (f" on {day:%Y-%m-%d}" if day else "")
                            + (f" in week {r.week}" if r.week else ""))
    if want_markets and any(g["market_count"] for g in rows):
        rows = [g for g in rows if g["market_count"]]
    chosen = _nearest(rows, at, r)
    if len(rows) > 1 or shifted:
        how = "the one on the day asked about" if day else (
            f"week {r.week}" if r.week else "the one nearest to today in the data")
        others = len(rows) - 1
        facts.assume("game", f"Took the game to be {game_label(chosen)} ({how}"
                             + (f"; {others} other game{'s' if others != 1 else ''} matched" if others else "") + ").")
    if len(teams) == 1 and len(named.teams) == 1 and teams[0].score < 1.0:
        facts.assume("team", f"Read the team as {teams[0].name}.")
    return chosen


RESULT_CUES = {"score", "scores", "final", "result", "results", "won", "win", "beat", "lost", "lose", "last",
               "previous", "outcome", "winner", "did"}


def _nearest(rows: Sequence[Mapping[str, Any]], at: datetime, r: u.Reading) -> Mapping[str, Any]:
    if r.cues(RESULT_CUES) and "next" not in r.wordset:
        # asked about a result: the games that have one, when any does
        rows = [g for g in rows if g["status"] == "final"] or rows
    past = [g for g in rows if _kickoff(g) <= at]
    future = [g for g in rows if _kickoff(g) > at]
    if "next" in r.wordset or "upcoming" in r.wordset:
        return future[0] if future else rows[-1]
    if "last" in r.wordset or "previous" in r.wordset:
        return past[-1] if past else rows[0]
    if future and _kickoff(future[0]) - at <= timedelta(days=NEAR_DAYS) and not (
            past and at - _kickoff(past[-1]) <= timedelta(hours=6)):
        return future[0]
    return past[-1] if past else future[0]


def game_source(row: Mapping[str, Any]) -> Source:
    return Source(key=f"game:{row['id']}", kind="game", label=game_label(row), source=row["source"],
                  as_of=utc(row["as_of"]), ref=row["id"], url=f"/v1/games/{row['id']}")  # type: ignore[arg-type]


def _game_words(row: Mapping[str, Any]) -> dict[str, Any]:
    kickoff = utc(row["kickoff_at"])
    return dict(
        game_id=row["id"], home=row["home_name"], away=row["away_name"], status=row["status"],
        kickoff=kickoff, day=_local_day(row), venue=row["venue"], season=row["season"], week=row["week"],
        competition=row["competition"], period=row["period"], clock=row["clock"],
    )


# ---- 5. a game's schedule, status or score -------------------------------------------------------


async def game(conn: asyncpg.Connection, schema: str, r: u.Reading, named: Named, now: datetime) -> Facts:
    facts = Facts(Category.GAME)
    row = await find_game(conn, schema, r, named, now, facts, want_markets=False)
    return game_of(facts, row)


def game_of(facts: Facts, row: Mapping[str, Any]) -> Facts:
    """A game answer's facts from its game row (also how a live answer is re-derived)."""
    facts.basis = {"category": int(Category.GAME), "game_id": row["id"]}
    cite = facts.cite(game_source(row))
    facts.words.update(_game_words(row))
    as_of = utc(row["as_of"])
    topic = game_topic(row["id"])
    facts.topic(topic)
    live = row["status"] in ("live", "suspended")
    if row["score_home"] is not None and row["score_away"] is not None:
        facts.add(Value("score_home", "score_home", f"{row['home_name']} points", float(row["score_home"]),
                        str(row["score_home"]), "points", as_of, row["source"], cite, topic if live else None))
        facts.add(Value("score_away", "score_away", f"{row['away_name']} points", float(row["score_away"]),
                        str(row["score_away"]), "points", as_of, row["source"], cite, topic if live else None))
    facts.links["game"] = f"/v1/games/{row['id']}"
    if not live:
        facts.live_topics.clear()  # a final or scheduled game's figures do not move
        if row["status"] == "scheduled":
            facts.live_topics.append(topic)  # its state will: kickoff, then the score
    return facts


# ---- 4. a market's consensus and no-vig -----------------------------------------------------------


async def market(conn: asyncpg.Connection, schema: str, r: u.Reading, named: Named, now: datetime) -> Facts:
    facts = Facts(Category.MARKET, wagering=True)
    row = await find_game(conn, schema, r, named, now, facts, want_markets=True)
    return await market_of(conn, schema, facts, row, r.market_types, r.devig_method)


async def market_of(conn: asyncpg.Connection, schema: str, facts: Facts, row: Mapping[str, Any],
                    market_types: set[str] | frozenset[str] | None, devig_method: str | None) -> Facts:
    """A market answer's facts from its game row, the market types asked for and the devig
    method named (None: the defaults); also how a live answer is re-derived."""
    facts.basis = {"category": int(Category.MARKET), "game_id": row["id"],
                   "types": sorted(market_types) if market_types else None, "method": devig_method}
    facts.words.update(_game_words(row))
    game_cite = facts.cite(game_source(row))
    facts.links["game"] = f"/v1/games/{row['id']}"
    method = devig_method or DEFAULT_METHOD
    card = cards.ref(f"devig.{method}")
    markets = await reads.game_markets(conn, schema, row["id"])
    wanted = market_types or {"h2h", "spreads", "totals"}
    chosen = []
    candidates = [m for m in markets if m["type"] in wanted]
    mains = await markets_sql.main_lines(conn, schema, [m["id"] for m in candidates]) if candidates else {}
    for m in sorted(candidates, key=lambda m: (m["period"] != "full", ["h2h", "spreads", "totals"].index(m["type"])
                                               if m["type"] in ("h2h", "spreads", "totals") else 9)):
        line = mains.get(m["id"])
        if line is not None and line["outcomes"] and not any(c[0]["type"] == m["type"] for c in chosen):
            chosen.append((m, line))
    if not chosen:
        raise NotAnswerable(f"consensus prices for {game_label(row)}"
                            + (f" ({', '.join(MARKET_NAMES.get(t, t) for t in sorted(wanted))})" if market_types else ""))
    if devig_method is None:
        facts.assume("devig_method", f"No-vig probabilities by the {method} method (the default).")
    facts.words["markets"] = []
    live_game = row["status"] in ("scheduled", "live", "suspended")
    for m, line_row in chosen:
        line = market_line(line_row, method)  # as the market route serves it
        kind = MARKET_NAMES.get(m["type"], m["type"])
        label = f"Consensus {kind}, {game_label(row)}"
        topic = market_topic(m["id"])
        cite = facts.cite(Source(key=f"market:{m['id']}", kind="market", label=label, source=line.source,
                                 as_of=line.as_of, ref=m["id"], url=f"/v1/markets/{m['id']}?devig={method}",
                                 formulas=(card, cards.ref("odds.overround"))))
        if live_game:
            facts.topic(topic)
        live_topic = topic if live_game else None
        outcomes = []
        for o in line.outcomes:
            name = _outcome_name(o, row)
            key = f"{m['type']}:{o.selection}"
            item = {"selection": o.selection, "name": name, "point": o.point}
            if o.consensus_price is not None:
                v = facts.add(Value(f"{key}:price", "consensus_price", f"Consensus price, {name}",
                                    o.consensus_price.decimal,
                                    f"{o.consensus_price.decimal_display} ({o.consensus_price.american_display})",
                                    "decimal_odds", line.as_of, line.source, cite, live_topic, o.selection))
                item["price"] = v.key
            if o.no_vig_probability is not None:
                v = facts.add(Value(f"{key}:p", "no_vig_probability", f"No-vig probability, {name}",
                                    o.no_vig_probability, o.no_vig_probability_display or percent(o.no_vig_probability),
                                    "probability", line.as_of, line.source, cite, live_topic, o.selection))
                item["p"] = v.key
            outcomes.append(item)
        entry: dict[str, Any] = {"type": m["type"], "kind": kind, "books": line.books, "point": line.point,
                                 "basis": line.basis,
                                 "outcomes": outcomes, "cite": cite, "id": m["id"]}
        if line.hold is not None:
            v = facts.add(Value(f"{m['type']}:hold", "hold", f"Hold, consensus {kind}", line.hold,
                                line.hold_display or _pct(line.hold), "probability", line.as_of, line.source, cite,
                                live_topic))
            entry["hold"] = v.key
        facts.words["markets"].append(entry)
        facts.links.setdefault("market", f"/v1/markets/{m['id']}")
    facts.words["method"] = method
    facts.words["game_cite"] = game_cite
    return facts


def _outcome_name(o: Any, row: Mapping[str, Any]) -> str:
    if o.selection == "home":
        base = row["home_name"]
    elif o.selection == "away":
        base = row["away_name"]
    elif o.selection in ("over", "under"):
        base = o.selection.capitalize()
    elif o.selection == "draw":
        base = "Draw"
    else:
        base = o.name
    if o.point is not None:
        point = o.point
        text = f"{point:+g}" if o.selection in ("home", "away") else f"{point:g}"
        return f"{base} {text}"
    return base


# ---- 6. a slate ---------------------------------------------------------------------------------


async def slate(conn: asyncpg.Connection, schema: str, r: u.Reading, named: Named, now: datetime) -> Facts:
    facts = Facts(Category.SLATE)
    competition = named.competition or r.competition
    at, shifted = await anchor(conn, schema, now)
    if r.week is not None:
        comp = competition or "nfl"
        season = str(r.season) if r.season else await reads.latest_season(conn, schema, comp, at)
        if r.season is None:
            facts.assume("season", f"Took week {r.week} of the {season} season (the latest with games in the data).")
        facts.basis = {"category": int(Category.SLATE), "competition": comp, "season": season or "", "week": r.week}
    else:
        day = day_of(r, at) or at.astimezone(EASTERN).date()
        if shifted and not r.dates:
            facts.assume("date", f"No games are near today in the data: took the day relative to {at:%Y-%m-%d}, "
                                 "its latest game day.")
        facts.basis = {"category": int(Category.SLATE), "competition": competition, "day": day.isoformat()}
    return await slate_of(conn, schema, facts, facts.basis)


async def slate_of(conn: asyncpg.Connection, schema: str, facts: Facts, basis: dict[str, Any]) -> Facts:
    """A slate answer's facts: the games of a week (`competition`, `season`, `week`) or of a day
    (`day`, `competition` or None); also how a live answer is re-derived."""
    facts.basis = basis
    if basis.get("week") is not None:
        comp, season, week = basis["competition"], basis["season"], basis["week"]
        rows = await reads.week_games(conn, schema, competition=comp, season=season, week=week, limit=50)
        facts.words.update(scope=f"week {week} of the {season} {comp.upper().replace('_', ' ')} season")
    else:
        day = date.fromisoformat(basis["day"])
        starts, ends = day_bounds(day)
        _, rows = await reads.day_games(conn, schema, starts_at=starts, ends_at=ends, day=day,
                                        competition=basis["competition"], limit=50)
        facts.words.update(scope=f"{day:%A %B} {day.day}, {day.year} (US Eastern)")
    if not rows:
        raise NotAnswerable(f"games in {facts.words['scope']}")
    games = []
    for row in rows:
        cite = facts.cite(game_source(row))
        item = {"label": f"{row['away_name']} at {row['home_name']}", "status": row["status"], "cite": cite,
                "kickoff": utc(row["kickoff_at"])}
        if row["score_home"] is not None and row["score_away"] is not None:
            as_of = utc(row["as_of"])
            h = facts.add(Value(f"{row['id']}:home", "score_home", f"{row['home_name']} points",
                                float(row["score_home"]), str(row["score_home"]), "points", as_of, row["source"], cite))
            a = facts.add(Value(f"{row['id']}:away", "score_away", f"{row['away_name']} points",
                                float(row["score_away"]), str(row["score_away"]), "points", as_of, row["source"], cite))
            item.update(home=row["home_name"], away=row["away_name"], h=h.key, a=a.key)
        if row["status"] in ("scheduled", "live", "suspended"):
            facts.topic(game_topic(row["id"]))
        games.append(item)
    facts.words["games"] = games
    facts.words["count"] = len(rows)
    return facts


# ---- 7, 8. players ----------------------------------------------------------------------------

# the stats a sentence names, in order, with their words and unit
STAT_WORDS = (
    ("completions", "completions", "count"), ("attempts", "pass attempts", "count"),
    ("passing_yards", "passing yards", "yards"), ("passing_tds", "passing touchdowns", "count"),
    ("interceptions", "interceptions", "count"), ("carries", "carries", "count"),
    ("rushing_yards", "rushing yards", "yards"), ("rushing_tds", "rushing touchdowns", "count"),
    ("receptions", "receptions", "count"), ("targets", "targets", "count"),
    ("receiving_yards", "receiving yards", "yards"), ("receiving_tds", "receiving touchdowns", "count"),
    ("fantasy_points_ppr", "fantasy points (PPR)", "points"),
)
STAT_CUES = {
    "passing": ("completions", "attempts", "passing_yards", "passing_tds", "interceptions"),
    "pass": ("completions", "attempts", "passing_yards", "passing_tds", "interceptions"),
    "threw": ("passing_yards", "passing_tds", "interceptions"),
    "throw": ("passing_yards", "passing_tds", "interceptions"),
    "rushing": ("carries", "rushing_yards", "rushing_tds"), "rush": ("carries", "rushing_yards", "rushing_tds"),
    "ran": ("carries", "rushing_yards", "rushing_tds"), "carries": ("carries", "rushing_yards"),
    "receiving": ("receptions", "targets", "receiving_yards", "receiving_tds"),
    "receptions": ("receptions", "targets", "receiving_yards"), "catches": ("receptions", "targets", "receiving_yards"),
    "caught": ("receptions", "receiving_yards"), "targets": ("targets", "receptions"),
    "interceptions": ("interceptions",), "ints": ("interceptions",), "fantasy": ("fantasy_points_ppr",),
    "touchdowns": ("passing_tds", "rushing_tds", "receiving_tds"), "tds": ("passing_tds", "rushing_tds", "receiving_tds"),
    "td": ("passing_tds", "rushing_tds", "receiving_tds"),
}


def _pick_player(named: Named, facts: Facts) -> Entity:
    player = named.players[0]
    if player.others:
        facts.assume("player", f"Took the player to be {player.name}"
                               + (f" ({player.position})" if player.position else "")
                               + f"; also matched: {', '.join(player.others)}.")
    elif player.score < 1.0:
        facts.assume("player", f"Read the name as {player.name}.")
    return player


def player_source(row: Mapping[str, Any], as_of: datetime, source: str) -> Source:
    label = row["name"] + (f" ({row['position']}, {row['team_name']})" if row["position"] and row["team_name"] else "")
    return Source(key=f"player:{row['id']}", kind="player", label=label, source=source, as_of=as_of, ref=row["id"],
                  url=f"/v1/players/{row['id']}")


async def player_stats(conn: asyncpg.Connection, schema: str, r: u.Reading, named: Named, now: datetime) -> Facts:
    facts = Facts(Category.PLAYER_STATS)
    player = _pick_player(named, facts)
    row = await players_sql.get_player(conn, schema, player.id)
    if row is None:
        raise NotAnswerable(f"the player {player.name}")
    seasons = await stats_sql.season_lines(conn, schema, player.id)
    latest = await stats_sql.latest_game_lines(conn, schema, player.id)
    facts.words.update(player=row["name"], position=row["position"], team=row["team_name"])
    facts.links["player"] = f"/v1/players/{row['id']}"
    want: list[str] = []
    for word in r.words:
        for stat in STAT_CUES.get(word, ()):
            if stat not in want:
                want.append(stat)
    weekly = r.week is not None or "last" in r.wordset or "latest" in r.wordset
    lines = []
    if r.week is not None:
        week_rows = await conn.fetch(
            f"SELECT {column_list(StatLineRecord, 's.')} FROM {schema}.stat_lines s WHERE s.subject_id = $1 AND s.week = $2 "
            + ("AND s.season = $3 " if r.season else "") + "ORDER BY s.season DESC, s.source LIMIT 1",
            player.id, r.week, *([str(r.season)] if r.season else []))
        if week_rows:
            lines.append(("week", week_rows[0]))
    if not lines and weekly and latest:
        lines.append(("game", latest[0]))
    if not lines:
        whole = [s for s in seasons if (s["basis"] in (None, "total")) and (r.season is None or str(s["season"]) == str(r.season))]
        if whole:
            lines.append(("season", whole[0]))
        elif latest:
            lines.append(("game", latest[0]))
    if not lines:
        raise NotAnswerable(f"stat lines of {row['name']}")
    scope, line_row = lines[0]
    line = stat_line(line_row)
    as_of = utc(line_row["as_of"])
    cite = facts.cite(player_source(row, as_of, line_row["source"]))
    stats = {k: v for k, v in msgspec_to_dict(line.stats).items()}
    chosen = [s for s in want if s in stats] or [k for k, _, _ in STAT_WORDS if k in stats and _nonzero(stats[k])][:6]
    items = []
    for key in chosen:
        words, unit = next(((w, un) for k, w, un in STAT_WORDS if k == key), (key.replace("_", " "), "count"))
        value = float(stats[key])
        v = facts.add(Value(f"stat:{key}", key, words.capitalize(), value, _stat_display(value), unit, as_of,
                            line_row["source"], cite))
        items.append((words, v.key))
    if not items:
        raise NotAnswerable(f"the stats asked about in {row['name']}'s lines")
    game_words = None
    if line_row["game_id"]:
        g = await conn.fetchrow(f"SELECT {_GAME_NAMED} FROM {schema}.games g WHERE g.id = $1",
                                line_row["game_id"])
        if g is not None:
            game_words = f"{g['name']} (week {g['week']} of {g['season']})"
            facts.links["game"] = f"/v1/games/{g['id']}"
    facts.words.update(scope=scope, season=line.season, items=items, game=game_words)
    if scope == "season" and r.season is None:
        facts.assume("season", f"Used the {line.season} season, the latest in the data.")
    return facts


def msgspec_to_dict(value: Any) -> dict[str, Any]:
    import msgspec

    return msgspec.to_builtins(value) if not isinstance(value, dict) else value


def _nonzero(v: Any) -> bool:
    return isinstance(v, (int, float)) and v != 0


def _stat_display(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


async def injury_news(conn: asyncpg.Connection, schema: str, r: u.Reading, named: Named, now: datetime) -> Facts:
    facts = Facts(Category.INJURY_NEWS)
    player = _pick_player(named, facts)
    row = await players_sql.get_player(conn, schema, player.id)
    if row is None:
        raise NotAnswerable(f"the player {player.name}")
    injury = await players_sql.injury(conn, schema, player.id)
    news = await players_sql.news(conn, schema, player.id)
    availability = await players_sql.availability(conn, schema, player.id)
    as_of = max([utc(row["as_of"])] + [utc(x["as_of"]) for x in ([injury] if injury else []) + list(news)])
    source = injury["source"] if injury else (news[0]["source"] if news else row["source"])
    cite = facts.cite(player_source(row, as_of, source))  # type: ignore[arg-type]
    facts.links["player"] = f"/v1/players/{row['id']}"
    facts.words.update(player=row["name"], position=row["position"], team=row["team_name"], cite=cite)
    if injury is not None:
        facts.words["injury"] = {
            "status": injury["status"], "detail": injury["detail"], "practice": injury["practice"],
            "week": injury["week"], "season": injury["season"], "reported_at": utc(injury["reported_at"]),
            "game_day": injury["game_day"],
        }
    facts.words["availability"] = [{"status": a["status"], "week": a["week"], "season": a["season"]}
                                   for a in availability[:1]]
    facts.words["news"] = [{"headline": " ".join(n["headline"].split())[:200], "published_at": utc(n["published_at"]),
                            "source": n["source"]} for n in news[:2]]
    return facts


# ---- 9. a reference entry ---------------------------------------------------------------------


async def library_hits(conn: asyncpg.Connection, schema: str, text: str, jurisdiction: str | None,
                       kinds: Sequence[str] | None = None) -> list[asyncpg.Record]:
    if not text.strip():
        return []
    kind = kinds[0] if kinds is not None and len(kinds) == 1 else None
    rows = await library_sql.relevance_page(conn, schema, q=text[:500], kind=kind,
                                            jurisdiction=jurisdiction, product=None, operator=None, offset=0,
                                            limit=8)
    if kinds is not None:
        rows = [x for x in rows if x["kind"] in kinds]
    return rows


def reference_source(row: Mapping[str, Any]) -> Source:
    return Source(key=f"reference:{row['id']}", kind="reference", label=row["title"], source=row["source"],
                  as_of=utc(row["as_of"]), ref=row["id"], url=f"/v1/reference/{row['slug']}",  # type: ignore[arg-type]
                  reviewed_at=row["reviewed_at"], formulas=tuple(row["formulas"] or ()))


def reference(row: Mapping[str, Any], extra: Sequence[Mapping[str, Any]] = ()) -> Facts:
    facts = Facts(Category.REFERENCE, wagering=bool(row["wagering"]))
    cite = facts.cite(reference_source(row))
    facts.words.update(title=row["title"], summary=row["summary"], kind=row["kind"], cite=cite,
                       jurisdictions=list(row["jurisdictions"] or ()), stale=row["review_due"] < datetime.now(UTC).date())
    facts.links["reference"] = f"/v1/reference/{row['slug']}"
    related = []
    for other in extra[:2]:
        related.append((other["title"], other["summary"], facts.cite(reference_source(other))))
    facts.words["related"] = related
    return facts


# ---- 10. a strategy and its check ----------------------------------------------------------------


def strategy_names(e: Any) -> list[str]:
    """What a question may call a strategy: its name, aliases and slug, as normalised words."""
    from projections.search_terms import normalise

    return [n for n in {normalise(e.name), *(normalise(a) for a in e.aliases), normalise(e.slug.replace("-", " "))} if n]


def strategy_source(row: Mapping[str, Any], e: Any) -> Source:
    return Source(key=f"strategy:{row['id']}", kind="strategy", label=f"Strategy registry: {e.name}",
                  source=e.source, as_of=utc(row["as_of"]), ref=row["id"],  # type: ignore[arg-type]
                  url=f"/v1/strategies/{e.slug}", reviewed_at=e.evidence.reviewed_at,
                  formulas=tuple(cards.ref(f) for f in e.formulas if cards.get(f) is not None))


def strategy(found: tuple[Mapping[str, Any], Any], alternative: tuple[Mapping[str, Any], Any] | None) -> Facts:
    row, e = found
    facts = Facts(Category.STRATEGY, wagering=True)
    cite = facts.cite(strategy_source(row, e))
    lines = [
        (f"{e.name}: the strategy registry's verdict is {e.verdict} (version {row['version']}).", [cite]),
        (e.verdict_text.strip(), [cite]),
        (f"Evidence, grade {e.evidence.grade} ({e.evidence.grade_words}): {e.evidence.summary.strip()}", [cite]),
    ]
    if alternative is not None and e.alternative is not None:
        alt_row, alt = alternative
        alt_cite = facts.cite(strategy_source(alt_row, alt))
        lines.append((f"Instead: {alt.name} ({alt.verdict}). {e.alternative.why.strip()}", [alt_cite]))
    if e.route not in ("refuse", "decline"):
        lines.append((f"Its check runs on your own numbers: POST /v1/strategies/{e.slug}:check.", [cite]))
    facts.words["lines"] = lines
    facts.links["strategy"] = f"/v1/strategies/{e.slug}"
    facts.links["check"] = f"/v1/strategies/{e.slug}:check"
    return facts
