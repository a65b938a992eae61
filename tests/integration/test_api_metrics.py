"""GET /metrics: Prometheus text with every request counted by method, route template and status."""

from __future__ import annotations

import re



def _count(text: str, path: str, status: str, name: str = "svc_api_requests_total") -> float:
    for line in text.splitlines():
        if line.startswith(name + "{") and f'path="{path}"' in line and f'status_code="{status}"' in line:
            return float(line.rsplit(" ", 1)[1])
    return 0.0


async def test_requests_are_counted_by_route_template_and_status(api, sample):
    before = (await api.get("/metrics")).text
    for _ in range(3):
        assert (await api.get("/v1/games", params={"competition": "nfl", "season": "2024"})).status_code == 200
    assert (await api.get("/v1/games/gm_00000000000000000000")).status_code == 404
    assert (await api.get("/nowhere")).status_code == 404
    r = await api.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    after = r.text
    assert _count(after, "/v1/games", "200") - _count(before, "/v1/games", "200") == 3
    assert _count(after, "/v1/games/{game_id}", "404") - _count(before, "/v1/games/{game_id}", "404") == 1
    assert _count(after, "[unmatched]", "404") - _count(before, "[unmatched]", "404") == 1
    assert _count(after, "/v1/games", "200", "svc_api_request_duration_seconds_count") - _count(
        before, "/v1/games", "200", "svc_api_request_duration_seconds_count") == 3
    assert not re.search(r'path="/metrics"', after)  # scrapes are not counted
    assert "svc_api_requests_in_progress" in after
