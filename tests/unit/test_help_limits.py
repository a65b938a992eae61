"""Each limit's help entry states the limit the code enforces: the entries restate numbers kept
in code (plans, Wire constants, settings defaults, route bounds as the OpenAPI document shows
them), and a change to one of those must not leave its help entry saying the old value."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from access.plans import PLANS
from api.front import CLIENT_REQUEST_ID_MAX
from api.routes.wire_tickets import MAX_TOPICS
from api.wire_serving import ATTEMPTS, DRAIN_NOTICE_SECONDS
from infra.settings import Settings
from ingest.library import library_root, read_library
from wire.limits import PER_ADDRESS
from wire.messages import AUTH_SECONDS, INBOUND_PER_SECOND, MAX_FRAME_BYTES
from wire.tickets import TICKET_SECONDS
from wire.topics import TOPIC_MAX_LENGTH

HELP = {f.entry.slug: f.entry for f in read_library(library_root()) if f.entry.kind == "help"}
OPENAPI = json.loads((Path(__file__).parents[2] / "docs" / "openapi.json").read_text())
DEFAULTS = {f.name: f.default for f in msgspec.structs.fields(Settings)}


def says(slug: str, n: int | float) -> bool:
    """The entry's summary or body states n, written with or without thousands separators."""
    text = HELP[slug].summary + "\n" + HELP[slug].body
    n = int(n) if float(n).is_integer() else n
    return any(form in text for form in {f"{n:,}", str(n)})


def param(path: str, name: str) -> dict:
    return next(p["schema"] for p in OPENAPI["paths"][path]["get"]["parameters"] if p["name"] == name)


def plan_figures() -> list[tuple[str, int]]:
    out = []
    for plan in PLANS.values():
        out += [("limit-credits", plan.credits), ("limit-rate-limits", plan.rate_limit),
                ("limit-rate-limits", plan.rate_window), ("limit-wire-connections", plan.wire_connections),
                ("limit-wire-topics", plan.wire_topics)]
    return out


CASES = [
    *plan_figures(),
    ("limit-client-request-id", CLIENT_REQUEST_ID_MAX),
    ("limit-auth-deadline", AUTH_SECONDS),
    ("limit-frame-size", MAX_FRAME_BYTES),
    ("limit-inbound-messages", INBOUND_PER_SECOND),
    ("limit-drain-notice", DRAIN_NOTICE_SECONDS),
    ("limit-connection-lifetime", DRAIN_NOTICE_SECONDS),
    ("limit-connection-lifetime", DEFAULTS["wire_max_seconds"] // 3600),
    ("limit-ping-interval", DEFAULTS["wire_ping_seconds"]),
    ("limit-resume-window", DEFAULTS["wire_resume_seconds"]),
    ("limit-ticket-lifetime", TICKET_SECONDS),
    ("limit-topic-path", TOPIC_MAX_LENGTH),
    ("limit-wire-per-address", PER_ADDRESS),
    ("limit-wire-per-address", ATTEMPTS.limit),
    ("limit-wire-per-address", ATTEMPTS.window),
    ("limit-wire-topics", MAX_TOPICS),
    ("limit-reference-q", param("/v1/reference", "q")["maxLength"]),
    ("limit-search-q", param("/v1/search", "q")["maxLength"]),
    ("limit-cursor", param("/v1/reference", "cursor")["maxLength"]),
    ("limit-page-sizes", param("/v1/reference", "limit")["maximum"]),
    ("limit-page-sizes", param("/v1/reference", "limit")["default"]),
    ("limit-page-sizes", param("/v1/search", "limit")["maximum"]),
    ("limit-page-sizes", param("/v1/search", "limit")["default"]),
]


@pytest.mark.parametrize(("slug", "value"), CASES, ids=[f"{s}={v}" for s, v in CASES])
def test_a_limit_help_entry_states_the_enforced_value(slug, value):
    assert slug in HELP, f"no help entry {slug}"
    assert says(slug, value), f"{slug} does not state {value}"
