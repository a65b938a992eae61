"""No key or token ever reaches a log line: every structlog line and every stdlib log record of a
run of requests carrying keys (valid, revoked, unknown, in the header, the query, the path)."""

from __future__ import annotations

import io
import json
import logging
import sys

import msgspec
import structlog

from access.keys import new_key
from infra.logs import configure_logging
from tests.integration.access_support import make_key, serving
from tests.integration.test_access_keys_cli import keys as svc_keys


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        # the test's own HTTP client logs the URLs it sends; that is the caller's log, not ours
        if not record.name.startswith(("httpx", "httpcore")):
            self.lines.append(self.format(record) + " " + repr(record.args) + " " + repr(record.__dict__))


async def test_no_key_appears_in_any_log_line(settings, redis_url):  # noqa: F811
    settings = msgspec.structs.replace(settings, redis_url=redis_url, log_json=True, log_level="debug")
    saved_config, saved_stderr = structlog.get_config(), sys.stderr
    root, records = logging.getLogger(), Records()
    saved_level = root.level
    structlog_out = io.StringIO()
    sys.stderr = structlog_out
    try:
        configure_logging(settings, "api")  # the served app's logging, writing into structlog_out
        root.addHandler(records)
        root.setLevel(logging.DEBUG)

        created = json.loads((await svc_keys(settings, "create", "--account", "acme", "--plan", "free",
                                             "--scopes", "read:odds", "--json")).stdout)
        key = created["key"]
        revoked = await make_key(settings, "acme", "free", {"read:odds"})
        revoked_id = json.loads((await svc_keys(settings, "list", "--json")).stdout)["data"][-1]["key_id"]
        await svc_keys(settings, "revoke", revoked_id)
        unknown, _ = new_key("test")
        secrets_to_hide = [key, revoked, unknown]

        requests = 0
        async with serving(settings) as served:
            async with served.client(key=key) as c:
                for path in ("/v1/status", "/v1/_test/odds", "/v1/_test/odds?fail=404", "/v1/_test/answers",
                             f"/v1/status?api_key={key}", f"/v1/status?q={key}", f"/v1/{key}", f"/v1/status/{key}x",
                             "/health", "/v1/nowhere"):
                    await c.get(path)
                    requests += 1
            for bad in (revoked, unknown, "not-a-key"):
                async with served.client(key=bad) as c:
                    await c.get("/v1/status")
                    requests += 1
            async with served.client() as c:
                await c.get("/v1/status", headers={"Authorization": f"Basic {key}"})
                await c.post("/v1/status", headers={"Authorization": f"Bearer {key}"})
                requests += 2
    finally:
        sys.stderr = saved_stderr
        root.removeHandler(records)
        root.setLevel(saved_level)
        structlog.configure(**saved_config)
        structlog.contextvars.clear_contextvars()

    lines = structlog_out.getvalue().splitlines() + records.lines
    request_lines = [json.loads(line) for line in structlog_out.getvalue().splitlines() if '"event": "request"' in line]
    assert len(request_lines) == requests  # the access log did run: one line per request
    for line in lines:
        for secret in secrets_to_hide:
            assert secret not in line and secret[9:] not in line, line
        assert "Bearer" not in line and "api_key=" not in line, line
