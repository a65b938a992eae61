"""Prometheus metrics of the HTTP API, served at /metrics (prometheus-client's default registry).

Recorded by the front door (api/front.py) once a response is done: it already knows the status
and the timing, and Litestar has written the route's template into the scope by then. A request
costs a dictionary lookup, a bisect and three additions on plain numbers (one event loop: no
locks); the series are built from them when scraped. Litestar's Prometheus middleware, which
this replaces, built labels, a Request and four locked metric updates per request.

Series: `svc_api_requests_total`, `svc_api_request_duration_seconds` (histogram, the client's
default buckets) and `svc_api_requests_error_total` (5xx) by method, route template (`path`;
`[unmatched]` for requests no route took), status code and app name;
`svc_api_requests_in_progress` by app name.
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import accumulate

from prometheus_client import REGISTRY, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
from prometheus_client.utils import floatToGoString

APP_NAME = "svc_api"
UNMATCHED = "[unmatched]"
_LABELS = ("method", "path", "status_code", "app_name")
_BOUNDS = tuple(Histogram.DEFAULT_BUCKETS)  # ends with +Inf
_LE = [floatToGoString(b) for b in _BOUNDS]

# (method, path, status) -> [count, sum of seconds, count per bucket (not cumulative)]
_series: dict[tuple[str, str, int], list] = {}
_in_progress = 0


def started() -> None:
    global _in_progress
    _in_progress += 1


def finished() -> None:
    global _in_progress
    _in_progress -= 1


def observe(method: str, path: str | None, status: int, seconds: float) -> None:
    key = (method, path or UNMATCHED, status)
    series = _series.get(key)
    if series is None:
        series = _series[key] = [0, 0.0, [0] * len(_BOUNDS)]
    series[0] += 1
    series[1] += seconds
    series[2][bisect_left(_BOUNDS, seconds)] += 1


class _RequestMetrics:
    def collect(self):
        requests = CounterMetricFamily(f"{APP_NAME}_requests", "Total requests", labels=_LABELS)
        errors = CounterMetricFamily(f"{APP_NAME}_requests_error", "Total errors (5xx) in requests", labels=_LABELS)
        duration = HistogramMetricFamily(f"{APP_NAME}_request_duration_seconds", "Request duration, in seconds",
                                         labels=_LABELS)
        for (method, path, status), (count, total, buckets) in list(_series.items()):
            labels = [method, path, str(status), APP_NAME]
            requests.add_metric(labels, count)
            if status >= 500:
                errors.add_metric(labels, count)
            duration.add_metric(labels, list(zip(_LE, accumulate(buckets))), total)
        yield requests
        yield errors
        yield duration


REGISTRY.register(_RequestMetrics())  # type: ignore[arg-type]
IN_PROGRESS = Gauge(f"{APP_NAME}_requests_in_progress", "Requests currently in progress", ("app_name",)).labels(APP_NAME)
IN_PROGRESS.set_function(lambda: _in_progress)
