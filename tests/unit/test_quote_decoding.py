"""The projector decodes quotes with their decimals as text (projections/quote_event.py): the
fold must be exactly the fold of the canonical events, and a record the canonical decoder
rejects must still be counted as not a canonical event, never stop the fold."""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal

import msgspec

from projections.batch import BatchCore
from projections.quote_event import QuoteEvent, decoder
from projections.reducers import reduce
from projections.state import GameState
from schemas.events import decode, encode
from tests.support import projection_events as ev


class Rec(msgspec.Struct):
    topic: str
    partition: int
    offset: int
    value: bytes


def _records(values: list[bytes]) -> list[Rec]:
    return [Rec("feed.games", 0, i, v) for i, v in enumerate(values)]


def test_a_quote_decodes_to_the_canonical_fields_with_its_decimals_as_text():
    q = ev.quote("gm_1", "book0", [-110, 105], market_type="spreads", point="-3.5")
    lean = decoder.decode(encode(q))
    assert type(lean) is QuoteEvent
    canonical = decode(encode(q))
    for name in canonical.__struct_fields__:
        if name not in ("point", "outcomes"):
            assert getattr(lean, name) == getattr(canonical, name), name
    assert Decimal(lean.point) == canonical.point
    assert [(Decimal(o.price), None if o.point is None else Decimal(o.point)) for o in lean.outcomes] == [
        (o.price, o.point) for o in canonical.outcomes]


def test_the_fold_of_text_decimals_is_the_fold_of_canonical_quotes():
    game = ev.game(home="KC", away="BAL")
    quotes = [ev.quote(game.game_id, b, [p, -p - 10], market_type="totals", point=pt, minute=i)
              for i, (b, p, pt) in enumerate([("a", -110, "47.5"), ("b", -105, "47.50"), ("c", -120, "48"),
                                               ("a", -115, "47.5")])]
    core = BatchCore(3_600_000_000, publish=True)
    batch = core.fold(_records([encode(e) for e in [game, *quotes]]), datetime(2024, 9, 5, tzinfo=timezone.utc))
    # the same events through the reducers as canonical structs
    state = None
    seqs = []
    for e in [game, *quotes]:
        state, out = reduce(state, decode(encode(e)), 3_600_000_000)
        seqs += [(d.wire_topic, d.seq) for d in out]
    assert [(d.wire_topic, d.seq) for d in batch.deltas] == seqs
    folded = core.states[game.game_id]
    assert isinstance(folded, GameState) and isinstance(state, GameState)
    (market,) = folded.markets.values()
    (expected,) = state.markets.values()
    assert sorted(market.lines) == sorted(expected.lines) == ["47.5", "48"]
    for key, line in market.lines.items():
        assert line.point == expected.lines[key].point and line.consensus == expected.lines[key].consensus
        assert {b: q.stored() for b, q in line.books.items()} == {
            b: q.stored() for b, q in expected.lines[key].books.items()}


def test_a_quote_whose_price_is_not_a_decimal_is_a_bad_record_and_the_fold_goes_on():
    game = ev.game(home="KC", away="BAL")
    good = ev.quote(game.game_id, "a", [-110, -110], market_type="h2h", minute=1)
    broken = encode(ev.quote(game.game_id, "b", [-110, -110], market_type="h2h", minute=2)).replace(
        b'"price":"-110"', b'"price":"minus ten"', 1)
    assert b"minus ten" in broken
    core = BatchCore(3_600_000_000, publish=False)
    batch = core.fold(_records([encode(game), broken, encode(good)]), datetime(2024, 9, 5, tzinfo=timezone.utc))
    assert [(offset, "decimal" in reason.lower()) for _, offset, reason in batch.bad] == [(1, True)]
    assert batch.applied == 2
    (market,) = core.states[game.game_id].markets.values()
    assert list(market.lines[""].books) == ["a"]


def test_a_first_event_of_a_key_that_is_bad_leaves_no_row_behind():
    game = ev.game(home="KC", away="BAL")
    broken = encode(ev.quote(game.game_id, "b", [-110, -110], market_type="h2h", minute=2)).replace(
        b'"price":"-110"', b'"price":"x"', 1)
    core = BatchCore(3_600_000_000, publish=False)
    batch = core.fold(_records([broken]), datetime(2024, 9, 5, tzinfo=timezone.utc))
    assert len(batch.bad) == 1 and batch.applied == 0
    assert game.game_id not in core.states and game.game_id not in batch.start
    assert all(not rows for table, rows in batch.rows.rows.items() if table != "projector_state")


# ---- the priced outcomes kept by their texts (`reducers.markets.book_quote`) -------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from projections.quotes import decimal_of  # noqa: E402
from projections.reducers.common import origin_of  # noqa: E402
from projections.reducers.markets import _PRICED, book_quote  # noqa: E402

_SELECTION_SETS = [("home", "away"), ("away", "home"), ("over", "under"), ("home", "away", "draw"), ("home", "home"),
                   ("yes",), ("zeta", "alpha", "home")]


@st.composite
def _quotes(draw):
    market_type = draw(st.sampled_from(["h2h", "spreads", "totals"]))
    point = None if market_type == "h2h" else draw(st.sampled_from(["-3", "-3.5", "3.50", "47.5", "47.50", "0"]))
    selections = draw(st.sampled_from(_SELECTION_SETS))
    fmt = draw(st.sampled_from(["american", "decimal"]))
    prices = [draw(st.sampled_from(["-110", "120", "2.05", "1.5", "0", "-100", "100"])) for _ in selections]
    points = [draw(st.sampled_from([None, point, "3.5", "-3.5"])) for _ in selections]
    return ev.quote("gm_1", draw(st.sampled_from(["bk1", "bk2"])), prices, market_type=market_type, point=point,
                    fmt=fmt, selections=selections, outcome_points=points, minute=draw(st.integers(0, 99)))


def _priced_or_error(q):
    try:
        return book_quote(decoder.decode(encode(q)), origin_of(q), decimal_of(q.point)).stored()
    except ArithmeticError as exc:
        return type(exc)


@settings(max_examples=300, deadline=None)
@given(st.lists(_quotes(), min_size=1, max_size=12))
def test_a_quote_priced_from_its_texts_is_the_quote_made_from_its_decimals(quotes):
    """Whether its texts were seen before (kept) or not, a quote's book quote is the one made of
    the canonical event's outcomes."""
    _PRICED.clear()
    for q in quotes + quotes:  # the second time round, every quote's texts are known
        canonical = decode(encode(q))
        try:
            # a canonical event's decimals are Decimals: never kept, made by `priced` every time
            expected = book_quote(canonical, origin_of(canonical), canonical.point).stored()
        except ArithmeticError as exc:
            expected = type(exc)
        assert _priced_or_error(q) == expected
