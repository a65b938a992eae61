"""How long the cycle collector stops the process: each pass's wall time, by generation.

A full (generation 2) pass walks every tracked object and holds the event loop while it does:
with 2,000 open Wire sockets one ran 897 ms and freed nothing (docs/benchmarks.md). These
figures show whether that still happens: `svc_gc_pause_seconds` (histogram by generation) and
`svc_gc_pause_max_seconds` on /metrics, and `pauses()` for a process's own use.

The callback only adds to plain numbers: it runs inside the collector, where taking a lock
that the interrupted code may hold (prometheus-client's metric objects take one) would deadlock;
the series are built when scraped, as api/metrics.py does for requests.
"""

from __future__ import annotations

import gc
import time
from bisect import bisect_left

from prometheus_client import REGISTRY
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.utils import floatToGoString

BOUNDS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, float("inf"))

# generation -> [count, sum of seconds, max seconds, count per bucket (not cumulative)]
_pauses: dict[int, list] = {g: [0, 0.0, 0.0, [0] * len(BOUNDS)] for g in range(3)}
_started = 0.0


def _callback(phase: str, info: dict) -> None:
    global _started
    if phase == "start":
        _started = time.perf_counter()
        return
    seconds = time.perf_counter() - _started
    row = _pauses[info["generation"]]
    row[0] += 1
    row[1] += seconds
    if seconds > row[2]:
        row[2] = seconds
    row[3][bisect_left(BOUNDS, seconds)] += 1


def pauses() -> dict[int, tuple[int, float, float]]:
    """generation -> (passes, seconds in all, longest pass in seconds) since the watch began."""
    return {g: (row[0], row[1], row[2]) for g, row in _pauses.items()}


class _Collector:
    def collect(self):
        hist = HistogramMetricFamily("svc_gc_pause_seconds", "Wall time of the cycle collector's passes",
                                     labels=["generation"])
        longest = GaugeMetricFamily("svc_gc_pause_max_seconds", "Longest cycle collector pass so far",
                                    labels=["generation"])
        for g, (count, total, top, buckets) in _pauses.items():
            cumulative, running = [], 0
            for le, n in zip(BOUNDS, buckets):
                running += n
                cumulative.append((floatToGoString(le), running))
            hist.add_metric([str(g)], cumulative, total)
            longest.add_metric([str(g)], top)
        yield hist
        yield longest


_installed = False


def watch() -> None:
    """Start timing the collector's passes in this process (once; a server process's start)."""
    global _installed
    if _installed:
        return
    _installed = True
    gc.callbacks.append(_callback)
    REGISTRY.register(_Collector())
