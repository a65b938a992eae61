"""The normalised text the search index matches with pg_trgm: no accents, lower case, words."""

from __future__ import annotations

import re
import unicodedata

_NOT_WORD = re.compile(r"[^0-9a-z]+")


def normalise(*parts: str | None) -> str:
    text = " ".join(p for p in parts if p)
    if not text.isascii():  # ASCII is its own NFKD form and carries no accents: the common case skips both
        text = unicodedata.normalize("NFKD", text)
        text = "".join(c for c in text if not unicodedata.combining(c))
    return _NOT_WORD.sub(" ", text.lower()).strip()
