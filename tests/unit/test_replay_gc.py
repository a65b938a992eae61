"""A catch-up raises the collector's young-generation threshold only while it runs, also when
catch-ups of both datasets overlap and end in either order."""

from __future__ import annotations

import gc

from projections.replay import CATCH_UP_GC_THRESHOLD, _rare_collections


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
    try:
        with _rare_collections():
            raise RuntimeError("write failed")
    except RuntimeError:
        pass
    assert gc.get_threshold() == before
