"""The collector's passes are timed (infra/gcwatch.py) and shown on /metrics by generation."""

from __future__ import annotations

import gc

from prometheus_client import REGISTRY, generate_latest

from infra import gcwatch


def test_a_full_collection_is_timed_and_exposed():
    gcwatch.watch()
    gcwatch.watch()  # once only: a second call adds no second callback or collector
    assert gc.callbacks.count(gcwatch._callback) == 1
    passes, seconds, longest = gcwatch.pauses()[2]
    gc.collect()
    after = gcwatch.pauses()[2]
    assert after[0] == passes + 1
    assert after[1] > seconds and after[2] >= longest and after[2] > 0
    text = generate_latest(REGISTRY).decode()
    assert f'svc_gc_pause_seconds_count{{generation="2"}} {float(after[0])}' in text
    assert 'svc_gc_pause_seconds_bucket{generation="2",le="+Inf"}' in text
    assert 'svc_gc_pause_max_seconds{generation="2"}' in text
