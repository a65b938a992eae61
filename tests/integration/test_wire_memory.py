"""1,000 idle Wire sockets opened and closed against a real API process (issue 19 item 19):
every one authenticated, every one counted in and out, and the process gives its memory back.
Under each server SVC_API_SERVER offers (infra/api_server.py). Two rounds on one process: the
first grows the process's pools (Python's, the allocator's), which the second reuses, so the
second, warm round is the one that shows what a socket costs and whether closing returns it.
The per-socket figures are measured by `make bench` (tests/perf/bench_wire_memory.py,
docs/benchmarks.md); the bounds here are far from them, so that a loaded machine does not
move a figure across one, but a socket that keeps what it held does."""

from __future__ import annotations

import pytest

from infra.api_server import SERVERS
from tests.support.wire_sockets import measure, serving

SOCKETS = 1_000
KIB = 1024
# what a warm idle socket may cost: under h2corn, the default server, and uvicorn the issue's
# target (both measured about 10 KiB); granian's own WebSocket holds a 128 KiB read buffer
# (measured 147 KiB in all)
OPEN_BOUND = {"h2corn": 20 * KIB, "uvicorn": 20 * KIB, "granian": 400 * KIB}


@pytest.mark.parametrize("server", SERVERS)
async def test_a_thousand_sockets_open_and_close_without_leaking(settings, topics, tmp_path, server):
    async with serving(settings, tmp_path, server) as (url, proc):
        first = await measure(settings, url, proc, SOCKETS)
        warm = await measure(settings, url, proc, SOCKETS)
    for figures in (first, warm):
        assert figures.errors == []  # every socket opened, authenticated and got its hello
        assert figures.rows_open == SOCKETS and figures.rows_closed == 0  # counted in, then every one out
    # an open idle socket costs the server something, bounded
    assert 0 < warm.per_socket < OPEN_BOUND[server], warm
    # closed, the warm round's sockets give back what they held: the process ends the round
    # within a quarter of what they cost of where it started, or within 4 MB (the RSS of a
    # process under a loaded test run moves by a few MB on its own; uvicorn's sockets cost
    # 6-10 KiB). A leak keeps it all. Under h2corn the process keeps much of it for a few rounds
    # (its pools and Python's: closed RSS grew 8.8, 5.9 and 2.7 MB over rounds 2-4, converging;
    # docs/benchmarks.md, wire_memory), so there only keeping more than a socket cost is a leak
    kept_bound = warm.per_socket + 4 * KIB if server == "h2corn" else max(warm.per_socket / 4, 4 * KIB)
    assert warm.kept_per_socket < kept_bound, warm
    # and the first round's growth is not repeated: a second 1,000 sockets leave the process
    # no bigger than the first left it, give or take 4 KiB a socket (Python's pools settling;
    # under h2corn, as above, give or take what a warm socket cost)
    settling = kept_bound if server == "h2corn" else 4 * KIB
    assert warm.closed_rss - first.closed_rss < settling * SOCKETS, (first, warm)
    assert warm.closed_rss - first.closed_rss < first.per_socket * SOCKETS / 2, (first, warm)
