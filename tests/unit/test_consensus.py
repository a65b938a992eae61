"""Consensus and no-vig per line against a straightforward reference computation (to 1e-9),
and the rules one by one: eligibility, window, main line, single source, exchange, suspension."""

from __future__ import annotations

from datetime import datetime, timezone

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from projections.batch import BatchCore
from projections.rows import TABLES
from schemas.events import encode
from tests.support import projection_events as ev
from tests.unit.consensus_reference import reference_market

WINDOW_S = 600
GAME = ev.game()
GID = GAME.game_id


class Rec(msgspec.Struct):
    topic: str
    partition: int
    offset: int
    value: bytes


def fold(events, window_s: int = WINDOW_S, batch: int = 10_000):
    """Fold events through the batch core; returns (core, rows of every batch, deltas)."""
    core = BatchCore(window_s * 1_000_000)
    records = [Rec("feed.games", 0, i, encode(e)) for i, e in enumerate(events)]
    rowsets, deltas = [], []
    for i in range(0, len(records), batch):
        b = core.fold(records[i:i + batch], datetime(2024, 1, 1, tzinfo=timezone.utc))
        rowsets.append(b.rows)
        deltas.extend(b.deltas)
    return core, rowsets, deltas


LINE_COLUMNS = [name for name, _ in TABLES["market_lines"][0]]


def served_lines(rowsets):
    """market_lines as the database would hold them after every batch (upserts and deletes)."""
    table = {}
    for rows in rowsets:
        for values in rows.rows["market_lines"]:
            row = dict(zip(LINE_COLUMNS, values))  # by column name: the order is the record model's
            table[(row["market_id"], row["line_key"])] = row
        for key in rows.lines_deleted:
            table.pop(key, None)
    return table


def markets_table(rowsets):
    table = {}
    for rows in rowsets:
        for row in rows.rows["markets"]:
            table[row[0]] = row
    return table


def assert_matches_reference(events, window_s=WINDOW_S):
    """The book market's served lines equal the reference. (An exchange's quotes form a market
    of their own, kind `exchange`, which never has a consensus.)"""
    _, rowsets, _ = fold([GAME, *events], window_s)
    mid = next(e.market_id for e in events if getattr(e, "kind", "game") != "exchange")
    lines, main, status = reference_market([e for e in events if e.market_id == mid], window_s)
    table = served_lines(rowsets)
    got = {key[1]: row for key, row in table.items() if key[0] == mid}
    assert set(got) == set(lines)
    for point, expected in lines.items():
        row = got[point]
        outcomes = msgspec.json.decode(row["outcomes"])
        assert row["books"] == expected["books"]
        assert [o["selection"] for o in outcomes] == expected["selections"]
        if not expected["served"]:  # one bookmaker: no number at all, and the notes say why
            assert row["hold"] is None and row["basis"] == "too_few_books"
            assert all(o["price"] is None and set(o["probability"].values()) == {None} for o in outcomes)
            assert msgspec.json.decode(row["methods"])["multiplicative"]["flags"] == ["too_few_books"]
            assert row["is_main"] == (point == main)
            continue
        assert row["basis"] == "consensus"
        assert abs(row["hold"] - expected["hold"]) < 1e-9
        for o in outcomes:
            assert abs(o["probability"]["multiplicative"] - expected["probability"][o["selection"]]) < 1e-9
            assert abs(o["price"] - expected["price"][o["selection"]]) < 1e-9
        assert row["is_main"] == (point == main)
    markets = markets_table(rowsets)
    assert markets[mid][7] == status
    assert all(r[10] == 0 for r in markets.values() if r[2] == "exchange")


american = st.one_of(st.integers(-400, -100), st.integers(100, 400))
books = st.sampled_from(["bk1", "bk2", "bk3", "bk4", "bk5", "ex1"])


@st.composite
def market_events(draw, market_type="h2h"):
    points = [None] if market_type == "h2h" else ["47.5", "48.5", "49"]
    events = [ev.quote(GID, "bk0", [draw(american), draw(american)], market_type=market_type,
                       point=draw(st.sampled_from(points)), minute=draw(st.integers(0, 40)))]
    for _ in range(draw(st.integers(1, 14))):
        book = draw(books)
        point = draw(st.sampled_from(points))
        minute = draw(st.integers(0, 40))
        prices = [draw(american), draw(american)]
        events.append(ev.quote(GID, book, prices, market_type=market_type, point=point, minute=minute,
                               kind="exchange" if book.startswith("ex") else "game"))
    mid = events[0].market_id  # the books' market
    for _ in range(draw(st.integers(0, 3))):
        book = draw(st.sampled_from([None, "bk1", "bk2"]))
        minute = draw(st.integers(0, 40))
        if draw(st.booleans()):
            events.append(ev.suspended(GID, mid, book=book, minute=minute))
        else:
            events.append(ev.reopened(GID, mid, book=book, minute=minute))
    return draw(st.permutations(events))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(market_events("h2h"))
def test_h2h_consensus_matches_reference(events):
    assert_matches_reference(events)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(market_events("totals"))
def test_totals_lines_and_main_line_match_reference(events):
    assert_matches_reference(events)


def test_worked_example_three_books():
    # -150/+130, -140/+120, -160/+140: medians of no-vig and of decimal prices by hand
    events = [
        ev.quote(GID, "a", [-150, 130], minute=1),
        ev.quote(GID, "b", [-140, 120], minute=2),
        ev.quote(GID, "c", [-160, 140], minute=3),
    ]
    _, rowsets, _ = fold([GAME, *events])
    (row,) = served_lines(rowsets).values()
    outcomes = msgspec.json.decode(row["outcomes"])
    # book a: implied 0.6, 0.434782...; no-vig home 0.6/1.034782... = 0.579831...
    no_vig_home = [0.6 / (0.6 + 100 / 230), (140 / 240) / (140 / 240 + 100 / 220), (160 / 260) / (160 / 260 + 100 / 240)]
    no_vig_away = [1 - p for p in no_vig_home]
    home, away = sorted(no_vig_home)[1], sorted(no_vig_away)[1]
    assert abs(outcomes[0]["probability"]["multiplicative"] - home / (home + away)) < 1e-12
    assert outcomes[0]["price"] == 5 / 3  # median of 1+100/140, 1+100/150, 1+100/160, exactly rounded
    assert outcomes[1]["price"] == 2.3  # median of 2.2, 2.3, 2.4
    assert abs(row["hold"] - (1 - 1 / (1 / (1 + 100 / 150) + 1 / 2.3))) < 1e-12
    assert row["books"] == 3


def test_a_one_book_line_serves_no_number_and_says_why():
    """Issue 19 item 12: one bookmaker's price is not a consensus."""
    _, rowsets, deltas = fold([GAME, ev.quote(GID, "draftkings", [-110, -105], market_type="spreads", point="-3")])
    (row,) = served_lines(rowsets).values()
    outcomes = msgspec.json.decode(row["outcomes"])
    assert row["books"] == 1 and row["is_main"] is True and row["hold"] is None and row["basis"] == "too_few_books"
    assert [o["point"] for o in outcomes] == [-3.0, 3.0]  # the line itself is known
    assert all(o["price"] is None and set(o["probability"].values()) == {None} for o in outcomes)
    notes = msgspec.json.decode(row["methods"])
    assert all(n["flags"] == ["too_few_books"] and "at least 2" in n["message"] for n in notes.values())
    # nor does the Wire show it
    (line,) = [line for d in deltas if d.type.startswith("market") for line in d.data.lines]
    assert line.basis == "too_few_books" and line.hold is None
    assert all(o.price is None and o.probability == {"multiplicative": None} for o in line.outcomes)


def test_a_two_book_line_is_a_consensus():
    _, rowsets, _ = fold([GAME, ev.quote(GID, "draftkings", [-110, -110], market_type="spreads", point="-3"),
                          ev.quote(GID, "fanduel", [-120, 100], market_type="spreads", point="-3")])
    (row,) = served_lines(rowsets).values()
    outcomes = msgspec.json.decode(row["outcomes"])
    assert row["books"] == 2 and row["basis"] == "consensus" and row["hold"] is not None
    assert all(o["price"] is not None for o in outcomes)


def test_a_published_line_is_served_as_that_source_s_line():
    """nflverse publishes one line per game naming no bookmaker (schemas.bookmakers): served,
    labelled `published_line`, counting no bookmaker."""
    _, rowsets, _ = fold([GAME, ev.quote(GID, "nflverse", [-110, -110], market_type="spreads", point="-3",
                                         source="nflverse closing lines")])
    (row,) = served_lines(rowsets).values()
    outcomes = msgspec.json.decode(row["outcomes"])
    assert row["books"] == 0 and row["is_main"] is True and row["basis"] == "published_line"
    assert [o["probability"]["multiplicative"] for o in outcomes] == [0.5, 0.5]
    assert row["source"] == "nflverse closing lines"
    # with one bookmaker beside it, the published line's values are served, not the bookmaker's
    _, rowsets, _ = fold([GAME, ev.quote(GID, "nflverse", [-110, -110], market_type="spreads", point="-3",
                                         source="nflverse closing lines"),
                          ev.quote(GID, "draftkings", [-200, 170], market_type="spreads", point="-3")])
    (row,) = served_lines(rowsets).values()
    assert row["books"] == 1 and row["basis"] == "published_line"
    assert [o["probability"]["multiplicative"] for o in msgspec.json.decode(row["outcomes"])] == [0.5, 0.5]


def test_books_outside_the_window_of_the_newest_quote_drop_out():
    events = [ev.quote(GID, "old", [-200, 170], minute=0), ev.quote(GID, "new", [-110, -110], minute=11)]
    _, rowsets, _ = fold([GAME, *events], window_s=600)
    (row,) = served_lines(rowsets).values()
    assert row["books"] == 1  # "old" is 11 minutes older than the newest quote: out of a 10-minute window
    _, rowsets, _ = fold([GAME, *events], window_s=660)
    (row,) = served_lines(rowsets).values()
    assert row["books"] == 2


def test_exchange_quotes_and_incomplete_books_are_not_eligible():
    events = [
        ev.quote(GID, "a", [-110, -110, 500], market_type="h2h_3way", minute=1),
        ev.quote(GID, "b", [-120, 100, 450], market_type="h2h_3way", minute=1),
        ev.quote(GID, "c", [-130, 110], market_type="h2h", minute=1),  # no draw: not the usual outcome set
    ]
    _, rowsets, _ = fold([GAME, *events])
    (row,) = served_lines(rowsets).values()
    assert row["books"] == 2
    assert [o["selection"] for o in msgspec.json.decode(row["outcomes"])] == ["home", "away", "draw"]


def test_main_line_is_the_point_most_books_quote_then_the_closest_to_even():
    events = [
        ev.quote(GID, "a", [-110, -110], market_type="spreads", point="-3", minute=1),
        ev.quote(GID, "b", [-105, -115], market_type="spreads", point="-3", minute=1),
        ev.quote(GID, "c", [-150, 130], market_type="spreads", point="-2.5", minute=1),
        ev.quote(GID, "d", [-112, -108], market_type="spreads", point="-3.5", minute=1),
        ev.quote(GID, "e", [-111, -109], market_type="spreads", point="-3.5", minute=1),
    ]
    _, rowsets, _ = fold([GAME, *events])
    lines = {k[1]: r for k, r in served_lines(rowsets).items()}
    # -3 and -3.5 have two books each; -3.5 (-112/-108, -111/-109) is closer to even than -3
    assert {k for k, r in lines.items() if r["is_main"]} == {"-3.5"}
    (market,) = markets_table(rowsets).values()
    assert market[9] == lines["-3.5"]["point"] and market[10] == 2


def test_every_devig_method_is_served_per_line():
    _, rowsets, _ = fold([GAME, ev.quote(GID, "a", [-300, 250], minute=1), ev.quote(GID, "b", [-280, 230], minute=1)])
    (row,) = served_lines(rowsets).values()
    outcomes = msgspec.json.decode(row["outcomes"])
    methods = msgspec.json.decode(row["methods"])
    assert set(methods) == {"multiplicative", "additive", "power", "shin", "odds_ratio"}
    for method in methods:
        total = sum(o["probability"][method] for o in outcomes)
        assert abs(total - 1) < 1e-12
    # the longshot gets less under power/shin than under multiplicative (the favourite-longshot bias)
    away = outcomes[1]["probability"]
    assert away["power"] < away["multiplicative"] and away["shin"] < away["multiplicative"]
