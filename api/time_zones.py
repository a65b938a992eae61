"""IANA time zone names a request may use, from the pinned tzdata package's own zone list.

`zoneinfo.available_timezones()` also lists whatever files the host's zone directory holds
(`localtime`, the host's own zone under another name), and tzdata lists `Factory`, a zone
meaning "not set"; neither names a place, so neither is accepted.
"""

from __future__ import annotations

import zoneinfo
from functools import lru_cache
from importlib.resources import files

from api.problems import ProblemError, bounded

NOT_PLACES = frozenset({"Factory", "localtime", "posixrules"})


@lru_cache(maxsize=1)
def zone_names() -> frozenset[str]:
    names = files("tzdata").joinpath("zones").read_text(encoding="utf-8").split()
    return frozenset(names) - NOT_PLACES


def zone(name: str, param: str = "tz") -> zoneinfo.ZoneInfo:
    """An IANA zone by its name; anything else (paths, abbreviations, typos) is refused."""
    if name not in zone_names():
        raise ProblemError("invalid_request", f"'{bounded(name)}' is not an IANA time zone name.", param=param)
    return zoneinfo.ZoneInfo(name)
