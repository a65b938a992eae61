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
