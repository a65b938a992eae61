"""The client's retry rules (client/retries.py, client/_core.py): which answers are retried, how
long it waits, and that retries repeat the call's ids. The server side of these answers is
tested against the real API elsewhere; here httpx's MockTransport scripts the answers so each
rule is exercised exactly."""

from __future__ import annotations

import json

import httpx
import pytest
from hypothesis import given, strategies as st

import client
from client import retries


def _problem(status: int, code: str, **headers: str) -> httpx.Response:
    body = {"type": f"https://docs/problems/{code}", "title": code, "status": status, "code": code,
            "detail": "scripted", "param": None, "doc_url": "", "request_id": "req_" + "a" * 20,
            "retryable": status >= 500 or code == "rate_limited", "display_message": code}
    return httpx.Response(status, content=json.dumps(body), headers={"content-type": "application/problem+json", **headers})


def _ok() -> httpx.Response:
    return httpx.Response(200, json={"object": "health", "ok": True, "service": "api", "version": "1"})


def _scripted(*answers):
    sent: list[httpx.Request] = []
    script = list(answers)

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        answer = script.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return sent, httpx.Client(transport=httpx.MockTransport(handler))


def _client(http: httpx.Client, **kw) -> client.Client:
    return client.Client(base_url="http://svc.test", api_key="svc_test_k", http_client=http, **kw)


def test_rate_limited_is_retried_after_what_retry_after_says(monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr("client.clients.time.sleep", slept.append)
    sent, http = _scripted(_problem(429, "rate_limited", **{"Retry-After": "3"}), _ok())
    assert _client(http).health().ok
    assert slept == [3.0] and len(sent) == 2
    # one call: the retry repeats its Client-Request-Id
    assert sent[0].headers["client-request-id"] == sent[1].headers["client-request-id"]


def test_the_ratelimit_header_sets_the_wait_when_retry_after_is_absent(monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr("client.clients.time.sleep", slept.append)
    sent, http = _scripted(_problem(429, "rate_limited", RateLimit='"free";r=0;t=7'), _ok())
    assert _client(http).health().ok and slept == [7.0]


def test_5xx_is_retried_with_backoff_then_raised_as_a_server_error(monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr("client.clients.time.sleep", slept.append)
    sent, http = _scripted(_problem(503, "service_unavailable"), _problem(500, "internal_error"),
                           _problem(502, "upstream_error"))
    with pytest.raises(client.ServerError) as raised:
        _client(http, max_retries=2).health()
    assert raised.value.code == "upstream_error" and len(sent) == 3 and len(slept) == 2
    assert all(0 <= s <= 8 for s in slept)


def test_post_retries_repeat_the_idempotency_key(monkeypatch):
    monkeypatch.setattr("client.clients.time.sleep", lambda s: None)
    calc = httpx.Response(200, json={"object": "calculation", "name": "devig", "result": {"probabilities": [0.5, 0.5]}})
    sent, http = _scripted(_problem(503, "service_unavailable"), calc)
    assert _client(http).calculations.devig(odds=[2, 2]).result["probabilities"] == [0.5, 0.5]
    assert sent[0].headers["idempotency-key"] == sent[1].headers["idempotency-key"]
    assert sent[0].headers["idempotency-key"].startswith("idem_")


@pytest.mark.parametrize("status,code,error", [
    (429, "quota_exhausted", client.QuotaExhaustedError),
    (400, "invalid_request", client.InvalidRequestError),
    (403, "insufficient_scope", client.PermissionDeniedError),
    (409, "idempotency_in_progress", client.ConflictError),
    (422, "invalid_inputs", client.UnprocessableError),
])
def test_quota_exhausted_and_other_4xx_are_never_retried(monkeypatch, status, code, error):
    monkeypatch.setattr("client.clients.time.sleep", lambda s: pytest.fail("slept"))
    sent, http = _scripted(_problem(status, code, **{"Retry-After": "1"}))
    with pytest.raises(error) as raised:
        _client(http).health()
    assert raised.value.code == code and raised.value.request_id == "req_" + "a" * 20 and len(sent) == 1


def test_a_wait_longer_than_max_retry_wait_raises_at_once(monkeypatch):
    monkeypatch.setattr("client.clients.time.sleep", lambda s: pytest.fail("slept"))
    sent, http = _scripted(_problem(429, "rate_limited", **{"Retry-After": "600"}))
    with pytest.raises(client.RateLimitError) as raised:
        _client(http, max_retry_wait=30).health()
    assert raised.value.headers["retry-after"] == "600" and len(sent) == 1


def test_no_answer_is_retried_then_raised_as_a_connection_error(monkeypatch):
    monkeypatch.setattr("client.clients.time.sleep", lambda s: None)
    sent, http = _scripted(httpx.ConnectError("refused"), httpx.ReadTimeout("slow"), httpx.ReadTimeout("slow"))
    with pytest.raises(client.APITimeoutError):
        _client(http).health()
    assert len(sent) == 3


def test_a_non_json_error_body_still_raises_a_typed_error():
    sent, http = _scripted(httpx.Response(404, text="<html>nope</html>", headers={"Request-Id": "req_x"}))
    with pytest.raises(client.NotFoundError) as raised:
        _client(http, max_retries=0).health()
    assert raised.value.request_id == "req_x" and raised.value.status == 404


@given(st.integers(min_value=0, max_value=30))
def test_backoff_is_bounded_and_non_negative(attempt):
    assert 0 <= retries.backoff(attempt) <= 8.0


@given(st.lists(st.tuples(st.sampled_from(["free", "pro", "day"]), st.integers(0, 5), st.integers(0, 9999)), min_size=1, max_size=3))
def test_the_ratelimit_wait_is_the_longest_exhausted_window(items):
    header = ", ".join(f'"{n}";r={r};t={t}' for n, r, t in items)
    exhausted = [t for _, r, t in items if r == 0]
    assert retries.server_wait({"ratelimit": header}) == (max(exhausted) if exhausted else None)


def test_the_client_distribution_depends_on_httpx_msgspec_and_websockets_only():
    import re
    import tomllib
    from pathlib import Path

    meta = tomllib.loads((Path(client.__file__).parent / "pyproject.toml").read_text())
    names = {re.split(r"[<>=!~ \[]", d, maxsplit=1)[0] for d in meta["project"]["dependencies"]}
    assert names == {"httpx", "msgspec", "websockets"}
    assert meta["tool"]["setuptools"]["package-dir"] == {"client": "."}
