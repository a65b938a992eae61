"""Ingest's hot paths answer exactly as the plain rules they stand for.

Each shortcut (a cache, a fast accept in front of a full check) is compared here with the plain
rule written out the straightforward way, on values hypothesis picks to be awkward: equal
numbers written differently (1.9 and 1.90), non-finite and huge values, prices at the bounds.
"""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.prices import decimal_of_american
from ingest import prices
from schemas import bounds
from schemas.bounds import NAME_MAX, event_problem, forbidden_char, point_problem, price_problem
from schemas.events import GameStateChanged, KnownBy, NewsPublished, Outcome, PriceQuoted, TeamRegistered

# prices as a feed writes them: usual lines, the bounds, the same value with more digits,
# and hostile values (NaN, infinities, huge and tiny exponents)
_usual = st.sampled_from(["-110", "-105", "150", "-238", "10900", "1.91", "1.9", "1.90", "2.5", "1.0", "1", "100",
                          "-100", "-99", "1000000", "1000001", "10001", "10001.0", "1.0000000000000000000001",
                          "-0.0000000000000000000000000000000001", "NaN", "Infinity", "-Infinity", "1E+5",
                          "100000.00000000000000000000000000000000000", "-5000"])
_prices = st.one_of(
    _usual.map(Decimal),
    st.decimals(allow_nan=False, allow_infinity=False, places=3, min_value=-20_000, max_value=20_000),
    st.decimals(allow_nan=True, allow_infinity=True),
)


def _plain_infer_format(values: list[Decimal]) -> str:
    floats = [float(p) for p in values if p.is_finite()]
    if not floats or min(floats) < 0:
        return "american"
    return "decimal" if any(1.0 < v < 100.0 for v in floats) else "american"


def _plain_check_market(values: list[Decimal], fmt: str, exchange: bool) -> str | None:
    for p in values:
        if problem := price_problem(p, fmt):
            return problem
    if exchange:
        return None
    total = 0.0
    for p in values:
        x = float(p)
        total += 1.0 / (x if fmt == "decimal" else decimal_of_american(x))
    if not float(prices.OVERROUND_MIN) <= total <= float(prices.OVERROUND_MAX):
        return f"implausible overround {total:.4f} (placeholder or broken prices {', '.join(str(p) for p in values)})"
    return None


def _check_market(values: list[Decimal], fmt: str, exchange: bool) -> str | None:
    try:
        prices.check_market(values, fmt, exchange=exchange)  # type: ignore[arg-type]
    except prices.BadPrice as exc:
        return str(exc)
    return None


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(_prices, min_size=1, max_size=4), min_size=1, max_size=6),
       st.sampled_from(["american", "decimal"]), st.booleans())
def test_cached_price_checks_answer_as_the_plain_rule(markets, fmt, exchange):
    # several markets in a row: later ones meet values the caches already hold
    for values in markets:
        assert prices.infer_format(values) == _plain_infer_format(values)
        assert _check_market(values, fmt, exchange) == _plain_check_market(values, fmt, exchange)


def test_the_price_caches_stay_bounded():
    # a hostile file of distinct prices: the caches are emptied, never grown past their bound
    for i in range(3 * prices._CACHE_MAX):
        prices.infer_format([Decimal(i) + Decimal("0.5")])
        prices._decimal_of(Decimal(100 + i), "american")
    assert 0 < len(prices._floats) <= prices._CACHE_MAX and 0 < len(prices._decimals) <= prices._CACHE_MAX


# ---- the event backstop on quotes: accepts exactly what every plain bound accepts -------------

_TEXTS = st.one_of(st.sampled_from(["Home", "Over", "x" * 200, "x" * 201, "B\x00", "A\u202eB", "Draw", ""]),
                   st.text(max_size=8))
_NOW = datetime(2030, 9, 1, tzinfo=timezone.utc)


def _plain_quote_problem(q: PriceQuoted, numbers_checked: bool) -> bool:
    texts = [q.source, q.source_id, q.game_id, q.market_id, q.book, q.book_name, q.kind, q.market_type, q.period]
    for o in q.outcomes:
        texts += [o.selection, o.name] + ([o.participant_id] if o.participant_id is not None else [])
        if not numbers_checked and (price_problem(o.price, o.price_format) or (
                o.point is not None and point_problem(o.point, q.market_type))):
            return True
    if not numbers_checked and q.point is not None and point_problem(q.point, q.market_type):
        return True
    return any(t is not None and (len(t) > NAME_MAX or forbidden_char(t)) for t in texts)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_TEXTS, _TEXTS, _prices, st.one_of(st.none(), _prices)), min_size=1, max_size=3),
       _TEXTS, st.sampled_from(["h2h", "spreads", "totals"]), st.one_of(st.none(), _prices), st.booleans())
def test_the_quote_backstop_refuses_exactly_what_a_plain_bound_refuses(outcomes, book_name, market_type, point, checked):
    q = PriceQuoted(
        source="s", source_id="x", source_ts=_NOW, ingest_ts=_NOW, game_id="gm_1", market_id="mkt_1", book="b",
        book_name=book_name, kind="game", market_type=market_type, point=point,
        outcomes=[Outcome(selection=s, name=n, price=p, price_format="american", point=pt) for s, n, p, pt in outcomes])
    problem = event_problem(q, quote_numbers_checked=checked)
    assert (problem is not None) == _plain_quote_problem(q, checked), problem


# ---- the backstop's known texts: an event whose texts all passed before is answered as one never seen ----

def _full_check(event, checked: bool) -> str | None:
    """event_problem with no text taken as known: every field weighed against its own bound."""
    known, texts_known = bounds._KNOWN_TEXTS, bounds._texts_known
    bounds._KNOWN_TEXTS, bounds._texts_known = set(bounds._ALWAYS_KNOWN), lambda plan, values: False
    try:
        return event_problem(event, quote_numbers_checked=checked)
    finally:
        bounds._KNOWN_TEXTS, bounds._texts_known = known, texts_known


def _forget_known_texts() -> None:
    bounds._KNOWN_TEXTS.clear()
    bounds._KNOWN_TEXTS.update(bounds._ALWAYS_KNOWN)


_LONG_TEXTS = st.one_of(_TEXTS, st.sampled_from(["y" * 2000, "y" * 2001, "z" * 199]))


def _events(texts, numbers, year):
    a, b, c, d = texts
    when = datetime(year, 1, 2, tzinfo=timezone.utc)
    price, point = numbers
    return [
        PriceQuoted(source=a, source_id=b, source_ts=when, ingest_ts=_NOW, game_id=c, market_id="mkt_1", book=d,
                    book_name=a, kind="game", market_type="spreads", point=point,
                    outcomes=[Outcome(selection="home", name=b, participant_id=c, price=price, price_format="american"),
                              Outcome(selection="away", name=d, price=price, price_format="american", point=point)]),
        TeamRegistered(source=a, source_id=b, source_ts=when, ingest_ts=_NOW, team_id=c, sport="nfl", competition=d,
                       name=a, aliases=[b, d], known_by=[KnownBy(a, c)]),
        GameStateChanged(source=a, source_id=b, source_ts=when, ingest_ts=_NOW, game_id=c, status="live",
                         score_home=int(price) if price.is_finite() and abs(price) < 10**6 else None, last_play=d),
        NewsPublished(source=a, source_id=b, source_ts=when, ingest_ts=_NOW, player_id=c, kind="news", headline=d),
    ]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.tuples(_LONG_TEXTS, _LONG_TEXTS, _LONG_TEXTS, _LONG_TEXTS),
                          st.tuples(_prices, st.one_of(st.none(), _prices)),
                          st.sampled_from([2030, 1700, 2101, 1880])), min_size=1, max_size=6),
       st.booleans())
def test_known_texts_change_no_answer_of_the_backstop(rows, checked):
    # events in a row: texts that passed in one (and only those) are known in the next; each
    # answer is the one the full check gives the event alone, every text weighed afresh
    _forget_known_texts()
    for texts, numbers, year in rows:
        for event in _events(texts, numbers, year):
            assert event_problem(event, quote_numbers_checked=checked) == _full_check(event, checked)
            assert all(t is None or (len(t) <= NAME_MAX and not forbidden_char(t)) for t in bounds._KNOWN_TEXTS)


def test_a_quote_whose_texts_passed_before_is_answered_from_them():
    _forget_known_texts()
    quote = _events(("The Odds API", "g1", "gm_1", "book"), (Decimal(-110), Decimal("3.5")), 2030)[0]
    values = msgspec.structs.astuple(quote)
    assert not bounds._texts_known(bounds._PLANS[PriceQuoted], values)  # first seen: the full check
    assert event_problem(quote) is None
    assert bounds._texts_known(bounds._PLANS[PriceQuoted], values)
    # known texts, numbers still checked: a year, a price outside the bounds
    late = msgspec.structs.replace(quote, source_ts=datetime(2101, 1, 1, tzinfo=timezone.utc))
    assert event_problem(late) == "source_ts 2101-01-01T00:00:00+00:00 is outside the years 1880..2100"
    bad = msgspec.structs.replace(quote, outcomes=[msgspec.structs.replace(quote.outcomes[0], price=Decimal(-99))])
    assert event_problem(bad) == "American price -99 is between -100 and +100"
    assert event_problem(bad, quote_numbers_checked=True) is None


def test_the_known_texts_stay_bounded(monkeypatch):
    monkeypatch.setattr(bounds, "_KNOWN_TEXTS_MAX", 100)
    _forget_known_texts()
    for i in range(1_000):
        event = NewsPublished(source="s", source_id=f"id{i}", source_ts=_NOW, ingest_ts=_NOW, player_id=f"plr_{i}",
                              kind="news", headline=f"headline {i}")
        assert event_problem(event) is None
        assert len(bounds._KNOWN_TEXTS) <= 100 and None in bounds._KNOWN_TEXTS and "" in bounds._KNOWN_TEXTS
