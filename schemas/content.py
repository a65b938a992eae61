"""What every content file of the service shares (library entries, strategies, recipes): the
source a reader can check, TOML read into a msgspec type with the reason on failure, front
matter, repeated-value checks and content hashes.

Pure: no I/O. `schemas/library.py` and `schemas/strategies.py` hold the file formats;
`ingest/content.py` reads the files and turns them into events.
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Iterable
from datetime import date
from typing import Annotated, Any, TypeVar

import msgspec
from msgspec import Meta

Text = Annotated[str, Meta(min_length=1, max_length=500)]
LongText = Annotated[str, Meta(min_length=1, max_length=2000)]
Url = Annotated[str, Meta(min_length=2, max_length=2000, pattern=r"^(https?://\S+|/\S*)$")]
FORMULA = r"^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$"  # a formula card's ID, such as devig.shin
FormulaId = Annotated[str, Meta(pattern=FORMULA)]

T = TypeVar("T")


class Source(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Where a reader can check what a file says: a URL, or a path of this service (a formula card)."""

    title: Text
    publisher: Text
    url: Url
    published_on: date | None = None
    accessed_on: date | None = None


class EntryError(ValueError):
    """The file is not a valid entry; the message is the reason a dead letter carries."""


def split_front_matter(text: str) -> tuple[str, str]:
    """(TOML header, Markdown body) of a file that opens with a `+++` line."""
    text = text.lstrip("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "+++":
        raise EntryError("the file must open with a '+++' line (TOML front matter)")
    for i in range(1, len(lines)):
        if lines[i].strip() == "+++":
            return "".join(lines[1:i]), "".join(lines[i + 1:])
    raise EntryError("the front matter has no closing '+++' line")


def _where(exc: msgspec.ValidationError, what: str) -> str:
    # msgspec says "... - at `$.sources[0].url`"; the TOML has no `$`, say the key instead
    return str(exc).replace("`$.", "`").replace("`$`", f"the {what}")


def load_toml(text: str, into: type[T], what: str = "front matter") -> T:
    """TOML text converted to `into`, or EntryError saying which key is wrong and why."""
    try:
        raw = tomllib.loads(text.lstrip("\ufeff"))
    except tomllib.TOMLDecodeError as exc:
        raise EntryError(f"{what} is not TOML: {exc}") from None
    try:
        return msgspec.convert(raw, into)
    except msgspec.ValidationError as exc:
        raise EntryError(_where(exc, what)) from None


def check_sources(sources: Iterable[Source], where: str = "sources") -> None:
    for i, s in enumerate(sources):
        if s.published_on is None and s.accessed_on is None:
            raise EntryError(f"{where}[{i}] needs published_on or accessed_on")


def check_unique(**lists: Iterable[Any]) -> None:
    """Each named list holds each value once (a repeat is a mistake, not emphasis)."""
    for name, values in lists.items():
        values = list(values)
        if len(set(values)) != len(values):
            raise EntryError(f"{name} lists a value twice")


def check_review(reviewed_at: date, review_due: date) -> None:
    if review_due < reviewed_at:
        raise EntryError("review_due is before reviewed_at")


_encoder = msgspec.json.Encoder(order="deterministic")


def digest(value: Any) -> str:
    """A short, stable hash of a value (struct, list, ...) as canonical JSON."""
    return hashlib.blake2b(_encoder.encode(value), digest_size=16).hexdigest()
