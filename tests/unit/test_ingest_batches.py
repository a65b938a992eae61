"""How a run's items are grouped in batches (ingest/batches.py `batched`): every item once, in
order; at most `size` records a batch; a batch ends once its records' source text reaches its
limit, which is smaller for the first RAMP batches (a run sends nothing before its first batch
is built)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.batches import BATCH_TEXT, RAMP, batched
from ingest.records import Record, Rejected


def _items(spec: list[tuple[bool, int]]) -> list:
    """A record of `n` characters of source text, or a rejected item, per (is_record, n)."""
    return [Record(i, f"line {i}", "x" * n, lambda _res: []) if is_record else Rejected(i, f"line {i}", "", "bad")
            for i, (is_record, n) in enumerate(spec)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 400)), max_size=120), st.integers(1, 12),
       st.integers(1, 3000))
def test_batches_hold_every_item_once_in_order_within_their_limits(spec, size, text):
    items = _items(spec)
    batches = list(batched(iter(items), size=size, text=text))
    assert [r for b in batches for r in b.records] == [i for i in items if isinstance(i, Record)]
    assert [r for b in batches for r in b.rejected] == [i for i in items if isinstance(i, Rejected)]
    assert [b.indices for b in batches] == [{i.index for i in b.records} | {i.index for i in b.rejected}
                                            for b in batches]
    assert all(b.records or b.rejected for b in batches)
    by_index = {i.index: i for i in items}
    for n, b in enumerate(batches):
        limit = text >> max(RAMP - n, 0)
        records = chars = 0
        reached = []  # after each item of the batch, in order: whether it ends the batch
        for index in sorted(b.indices):
            if isinstance(by_index[index], Record):
                records += 1
                chars += len(by_index[index].raw)
            reached.append(records >= size or chars >= limit)
        assert not any(reached[:-1])  # never ended sooner
        assert reached[-1] or n == len(batches) - 1  # only the last may end short

def test_the_first_batches_are_smaller_then_full():
    records = _items([(True, 1024)] * 2048)  # 2 MiB of source text, 1 KiB a record
    sizes = [len(b.records) for b in batched(iter(records), size=10_000)]
    full = BATCH_TEXT // 1024
    assert sizes[:RAMP + 2] == [full >> 3, full >> 2, full >> 1, full, full]
