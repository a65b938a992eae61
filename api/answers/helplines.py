"""The cost line and help links of an answer, by US state: the library's helpline table
(`content/reference/helplines.toml`, read once) and the state's law entry.

Without a state, or for a state without its own helpline, the line is the service's cost line
(api.conventions.RG_LINE) and the help link the national helpline entry."""

from __future__ import annotations

import tomllib
from functools import lru_cache
from importlib import resources

from api.answers.understand import US_STATES
from api.conventions import RG_LINE
from schemas.cost_line import AGE

HELP_ENTRY = "/v1/reference/us-national-problem-gambling-helpline"


@lru_cache(maxsize=1)
def _table() -> dict[str, dict]:
    text = resources.files("content.reference").joinpath("helplines.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def rg_line(state: str | None) -> str:
    """The cost line: 21+ and a helpline; a state's own helpline when the table has one."""
    if state is None:
        return RG_LINE
    entry = _table().get(f"US-{state}")
    if not entry or not entry.get("phone"):
        return RG_LINE
    place = US_STATES[state].title()
    return f"{AGE} only. Gambling problem? In {place}, call {entry['phone']} ({entry['name']})."


def help_links(state: str | None, law_slugs: set[str]) -> dict[str, str]:
    """`responsible_gambling` (the helpline entry) and, for a state, its law entry when the
    library publishes one (`law_slugs`: the published ones among those asked for)."""
    links = {"responsible_gambling": HELP_ENTRY}
    if state is not None:
        slug = law_slug(state)
        if slug in law_slugs:
            links["law"] = f"/v1/reference/{slug}"
    return links


def law_slug(state: str) -> str:
    return f"us-{state.lower()}-sports-betting"
