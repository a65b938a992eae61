"""Partitions over replay workers (`replay_pool.assign`): each partition to exactly one worker,
no more groups than workers, and the longest-first rule keeps every group within one
partition's worth of the average."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from projections.replay_pool import assign

partitions = st.dictionaries(
    st.tuples(st.sampled_from(["live.feed.games", "live.feed.players", "live.feed.teams"]), st.integers(0, 15)),
    st.integers(0, 10**6), min_size=1, max_size=48,
)


@given(partitions, st.integers(1, 8))
def test_every_partition_has_exactly_one_worker_and_loads_stay_balanced(remaining, workers):
    groups = assign(remaining, workers)
    owned = [tp for g in groups for tp in g]
    assert sorted(owned) == sorted(remaining)
    assert 1 <= len(groups) <= workers and all(groups)
    loads = [sum(remaining[tp] for tp in g) for g in groups]
    if len(groups) == workers:
        assert max(loads) <= sum(loads) / workers + max(remaining.values())


@given(partitions, st.integers(1, 8))
def test_the_same_input_gives_the_same_groups(remaining, workers):
    assert assign(remaining, workers) == assign(dict(reversed(list(remaining.items()))), workers)


def test_the_biggest_partitions_go_to_different_workers():
    remaining = {("t", 0): 900, ("t", 1): 800, ("t", 2): 100, ("t", 3): 50}
    groups = assign(remaining, 2)
    assert {("t", 0), ("t", 1)} not in [set(g) & {("t", 0), ("t", 1)} for g in groups]
    assert sorted(sum(remaining[tp] for tp in g) for g in groups) == [900, 950]
