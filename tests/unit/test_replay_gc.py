"""A catch-up raises the collector's young-generation threshold only while it runs (also when
catch-ups of both datasets overlap and end in either order); folds run without collections and
leave their survivors frozen until the last catch-up ends."""

from __future__ import annotations

import gc

import pytest

from projections.replay import CATCH_UP_GC_THRESHOLD, _folding, _rare_collections


def test_overlapping_catch_ups_restore_the_threshold_whichever_ends_first():
    before = gc.get_threshold()
    first, second = _rare_collections(), _rare_collections()
    first.__enter__()
    assert gc.get_threshold()[0] == max(before[0], CATCH_UP_GC_THRESHOLD)
    second.__enter__()
    first.__exit__(None, None, None)  # the first ends while the second still runs
    assert gc.get_threshold()[0] == max(before[0], CATCH_UP_GC_THRESHOLD)
    second.__exit__(None, None, None)
    assert gc.get_threshold() == before


def test_a_failed_catch_up_restores_the_threshold():
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), _rare_collections():
        raise RuntimeError("write failed")
    assert gc.get_threshold() == before


def test_a_fold_runs_without_collections_and_its_survivors_stay_out_of_scans_until_the_catch_up_ends():
    enabled = gc.isenabled()
    with _rare_collections():
        frozen_before = gc.get_freeze_count()
        kept = [{"state": i} for i in range(1000)]  # tracked objects a fold leaves behind
        with _folding():
            assert not gc.isenabled()
            kept.extend({"more": i} for i in range(1000))
        assert gc.isenabled() == enabled
        assert gc.get_freeze_count() >= frozen_before + len(kept)
        with _rare_collections():  # the other dataset's catch-up ends first: still frozen
            pass
        assert gc.get_freeze_count() >= frozen_before + len(kept)
    assert gc.get_freeze_count() == 0  # handed back to the collector when the last one ends


def test_a_failed_fold_turns_the_collector_back_on():
    enabled = gc.isenabled()
    with pytest.raises(ValueError), _folding():
        raise ValueError("bad record")
    assert gc.isenabled() == enabled
    gc.unfreeze()
