"""`line_consensus` (with its shortcut for unsuspended plain lines) and `consensus` (its medians
taken from columns built in one pass) give exactly what the code before them gave: the same
floats, books, basis and names, for any books, suspensions and window; and `pick_main`
(comparing ranks item by item) picks the line that comparing rank tuples picked."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from domain.devig import DEFAULT_METHOD
from projections.consensus import consensus, consensus_inputs, devig, eligible_quotes, line_consensus, pick_main
from projections.lines import BookQuote, Consensus, LineState
from projections.state import Origin, QuotedOutcome, Suspension

BOOKS = ["bk0", "bk1", "bk2", "bk3", "bk4", "bk5", "bk6", "bk7", "nflverse", "betfair"]  # a published line, an exchange
WINDOW_US = 600_000_000


def consensus_before(candidates: Sequence[BookQuote]) -> Consensus | None:
    """`consensus` as it was before the one-pass columns (commit af7b656), the oracle."""
    if not candidates:
        return None
    basis, n_books, eligible = consensus_inputs(candidates)
    n = len(eligible)
    mid = n // 2
    odd = n % 2 == 1
    first = eligible[0].outcomes
    probs: list[tuple[Any, ...]] = [q.probabilities for q in eligible]  # type: ignore[misc]
    odds: list[tuple[Any, ...]] = [q.odds for q in eligible]  # type: ignore[misc]
    medians: list[Any] = []
    prices: list[Any] = []
    for i in range(len(first)):
        ps = sorted([p[i] for p in probs])
        ds = sorted([d[i] for d in odds])
        if odd:
            medians.append(ps[mid])
            prices.append(ds[mid])
        else:
            medians.append((ps[mid - 1] + ps[mid]) / 2.0)
            prices.append((ds[mid - 1] + ds[mid]) / 2.0)
    total = sum(medians)
    probabilities = [m / total for m in medians]
    fair = 1.0 / len(prices)
    newest = max([q.ts for q in eligible])
    return Consensus(n_books, first, prices, probabilities, sum([abs(p - fair) for p in probabilities]),
                     newest, basis)


odds_values = st.sampled_from([1.5, 1.8, 1.9, 1.909090909090909, 2.0, 2.1, 2.5, 3.0, 1.0, 0.5])


@st.composite
def quote(draw, book: str) -> BookQuote:
    selections = draw(st.sampled_from([("home", "away"), ("home", "away", "draw"), ("over", "under"),
                                       ("home", "home"), ("home",)]))
    ts = draw(st.integers(0, 1_200)) * 1_000_000
    origin = Origin("src", ts, ts, f"e{draw(st.integers(0, 10**6))}")
    outcomes = tuple(QuotedOutcome(s, s.title(), None, Decimal("2"), "decimal", None) for s in selections)
    odds = tuple(draw(odds_values) for _ in selections)
    result = devig(DEFAULT_METHOD, odds) if len(odds) >= 2 and len(set(selections)) == len(selections) else None
    kind = "exchange" if book == "betfair" and draw(st.booleans()) else "game"
    if result is None or draw(st.integers(0, 9)) == 0:  # also a quote that cannot price the line
        return BookQuote(book, None, kind, origin, outcomes, None, selections, None, ts)
    return BookQuote(book, None, kind, origin, outcomes, odds, selections, result.probabilities, ts)


@st.composite
def lines(draw):
    names = draw(st.lists(st.sampled_from(BOOKS), unique=True, max_size=len(BOOKS)))
    books = {b: draw(quote(b)) for b in sorted(names)}
    suspend_all = None
    suspend_book: dict[str, Suspension] = {}
    if draw(st.integers(0, 3)) == 0:
        stamp = (draw(st.integers(0, 1_200)) * 1_000_000, "s")
        suspend_all = Suspension(stamp, draw(st.booleans()), None)
    if names and draw(st.integers(0, 3)) == 0:
        stamp = (draw(st.integers(0, 1_200)) * 1_000_000, "s")
        suspend_book[draw(st.sampled_from(names))] = Suspension(stamp, draw(st.booleans()), "why")
    return books, suspend_all, suspend_book


def same(a: Consensus | None, b: Consensus | None) -> bool:
    if a is None or b is None:
        return a is b
    return (a == b and a.names is b.names and a.prices == b.prices and a.probabilities == b.probabilities
            and a.evenness == b.evenness and a.books == b.books and a.basis == b.basis and a.newest == b.newest)


@settings(max_examples=600, deadline=None)
@given(lines(), st.sampled_from([WINDOW_US, 60_000_000, 0]))
def test_line_consensus_is_the_consensus_of_the_eligible_quotes_as_before(line, window_us):
    books, suspend_all, suspend_book = line
    expected = consensus_before(eligible_quotes(books, suspend_all, suspend_book, window_us))
    assert same(line_consensus(books, suspend_all, suspend_book, window_us), expected)
    assert same(consensus(eligible_quotes(books, suspend_all, suspend_book, window_us)), expected)


def test_the_shortcut_is_taken_and_agrees_on_a_plain_line_of_eight_books():
    """The replay's case: eight bookmakers quoting the same outcomes, none suspended."""
    books = {}
    for i in range(8):
        odds = (1.8 + i / 100, 2.1 - i / 100)
        result = devig(DEFAULT_METHOD, odds)
        assert result is not None
        origin = Origin("src", i, i, f"e{i}")
        outcomes = tuple(QuotedOutcome(s, s, None, Decimal("2"), "decimal", None) for s in ("home", "away"))
        books[f"bk{i}"] = BookQuote(f"bk{i}", None, "game", origin, outcomes, odds, ("home", "away"),
                                    result.probabilities, i)
    got = line_consensus(books, None, {}, WINDOW_US)
    assert got is not None and got.books == 8 and got.basis == "consensus" and got.newest == 7
    assert same(got, consensus_before(list(books.values())))


def pick_main_before(lines, window_us: int) -> str | None:
    """`pick_main` as it was before it compared ranks item by item (commit af7b656), the oracle."""
    newest = 0
    for line in lines.values():
        c = line.consensus
        if c is not None and c.newest > newest:
            newest = c.newest
    oldest_allowed = newest - window_us
    best = None
    best_rank: tuple = ()
    for key, line in lines.items():
        c = line.consensus
        if c is None or c.newest < oldest_allowed:
            continue
        rank = (not c.served, -c.books, -c.newest, c.evenness, line.point if line.point is not None else 0, key)
        if best is None or rank < best_rank:
            best, best_rank = key, rank
    return best


NAN = float("nan")


@st.composite
def main_lines(draw):
    out = {}
    for key in draw(st.lists(st.sampled_from(["", "47.5", "48", "-3", "3.5", "0", "x"]), unique=True, max_size=6)):
        point = None if key in ("", "x") else Decimal(key)
        c = None
        if draw(st.integers(0, 5)):
            c = Consensus(draw(st.integers(1, 4)), (), [], [], draw(st.sampled_from([0.0, 0.1, 0.2, NAN, 0.1000001])),
                          draw(st.integers(0, 3)) * 1_000_000,
                          draw(st.sampled_from(["consensus", "published_line", "too_few_books"])))
        out[key] = LineState(point, {}, c)
    return out


@settings(max_examples=600, deadline=None)
@given(main_lines(), st.sampled_from([0, 1_000_000, WINDOW_US]))
def test_pick_main_picks_what_comparing_rank_tuples_picked(lines, window_us):
    assert pick_main(lines, window_us) == pick_main_before(lines, window_us)
