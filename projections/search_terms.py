"""The normalised text the search index matches with pg_trgm: no accents, lower case, words."""

from __future__ import annotations

import re
import unicodedata

_NOT_WORD = re.compile(r"[^0-9a-z]+")


def normalise(*parts: str | None) -> str:
    text = " ".join(p for p in parts if p)
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    return _NOT_WORD.sub(" ", text).strip()
