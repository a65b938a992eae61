"""1,000 idle Wire sockets opened and closed against a real API process (issue 19 item 19):
every one authenticated, every one counted in and out, and the process gives its memory back.
Under each server SVC_API_SERVER offers (infra/api_server.py). Two rounds on one process: the
first grows the process's pools (Python's, the allocator's), which the second reuses, so the
second, warm round is the one that shows what a socket costs and whether closing returns it
(under uvicorn a third round too: its rule is on two warm rounds).
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
        # a third round under uvicorn only: its leak rule below is a share of two rounds' cost
        again = await measure(settings, url, proc, SOCKETS) if server == "uvicorn" else None
    rounds = [f for f in (first, warm, again) if f is not None]
    for figures in rounds:
        assert figures.errors == []  # every socket opened, authenticated and got its hello
        assert figures.rows_open == SOCKETS and figures.rows_closed == 0  # counted in, then every one out
    # an open idle socket costs the server something, bounded
    assert 0 < warm.per_socket < OPEN_BOUND[server], warm
    if server == "uvicorn":
        # closed, the warm rounds' sockets give back most of what they held. A leak keeps all of
        # it each round (kept >= what they cost); Python's and the allocator's pools keep a share
        # that shrinks round by round as they settle: 61-66% of a round's cost in rounds 2-3,
        # 27-36% by rounds 4-5 (measured 2026-11-27 under load 4-8; a fresh-clone CI run kept
        # 4.2 of 6.4 KiB, 65%, in round 2). One round's RSS moves by a MB or so on its own, a
        # fifth of a round's cost, so the rule is on two warm rounds together: a leak's share is
        # 100% or more, settling pools' about 64%
        kept = sum(f.closed_rss - f.base_rss for f in (warm, again))
        cost = sum(f.open_rss - f.base_rss for f in (warm, again))
        assert kept < 0.85 * cost, (warm, again)
        return
    # Under h2corn the process keeps much of it for a few rounds (its pools and Python's: closed
    # RSS grew 8.8, 5.9 and 2.7 MB over rounds 2-4, converging; docs/benchmarks.md, wire_memory),
    # so there only keeping more than a socket cost is a leak; granian's sockets cost 144 KiB and
    # it keeps 2-3 KiB of that, so a quarter is far from both
    kept_bound = warm.per_socket + 4 * KIB if server == "h2corn" else max(warm.per_socket / 4, 4 * KIB)
    assert warm.kept_per_socket < kept_bound, warm
    # and the first round's growth is not repeated: a second 1,000 sockets leave the process
    # no bigger than the first left it, give or take 4 KiB a socket (Python's pools settling;
    # under h2corn, as above, give or take what a warm socket cost)
    settling = kept_bound if server == "h2corn" else 4 * KIB
    assert warm.closed_rss - first.closed_rss < settling * SOCKETS, (first, warm)
    assert warm.closed_rss - first.closed_rss < first.per_socket * SOCKETS / 2, (first, warm)
