"""The reference library's entry: the file format, its validation, and the entry as the log holds it.

An entry is one Markdown file, `<kind>/<slug>.md` under the library root: TOML front matter
between two `+++` lines, then the body. `load_entry` turns a file's text into a `LibraryEntry`
or raises `EntryError` with the reason (the ingest dead-letters it with its path). Pure: no I/O;
`ingest/library.py` reads the files.

The entry's ID is `ref_` plus the hash of its slug (domain.ids.natural_id), so renaming a file
is retiring one entry and publishing another.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from schemas.content import (
    FORMULA, EntryError, FormulaId, Source, Text, Url, check_review, check_sources, check_unique, digest, load_toml,
    split_front_matter,
)
from domain.ids import natural_id

__all__ = ["EntryError", "FORMULA", "LibraryEntry", "Source", "Url", "content_hash", "entry_id", "file_hash",
           "load_entry", "split_front_matter"]

KINDS: tuple[str, ...] = ("term", "rule", "law", "tax", "policy", "guide", "help")
Kind = Literal["term", "rule", "law", "tax", "policy", "guide", "help"]
# the reference filter's product enum, plus `exchange` (betting exchanges: several rules and terms are about them)
PRODUCTS: tuple[str, ...] = (
    "sportsbook", "dfs", "pickem", "prediction_market", "sweepstakes", "season_fantasy", "horse_racing",
    "online_casino", "lottery", "exchange",
)
Product = Literal[
    "sportsbook", "dfs", "pickem", "prediction_market", "sweepstakes", "season_fantasy", "horse_racing",
    "online_casino", "lottery", "exchange",
]
Status = Literal["published", "draft", "retired"]

# ISO 3166 code, two letters optionally followed by a hyphen and 1 to 3 letters or
# digits (any case in a query; files hold the canonical upper case)
JURISDICTION = r"^[A-Za-z]{2}(-[A-Za-z0-9]{1,3})?$"
CANONICAL_JURISDICTION = r"^[A-Z]{2}(-[A-Z0-9]{1,3})?$"
OPERATOR = r"^[a-z][a-z0-9_]{1,39}$"  # lower-case letter first, 2 to 40 in all
SLUG = r"^[a-z0-9][a-z0-9-]{0,99}$"
_SLUG = re.compile(SLUG)

Slug = Annotated[str, Meta(pattern=SLUG)]
Jurisdiction = Annotated[str, Meta(pattern=CANONICAL_JURISDICTION)]
Operator = Annotated[str, Meta(pattern=OPERATOR)]


class FrontMatter(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The TOML header of an entry file, exactly (an unknown key is a mistake, not an extension)."""

    title: Text
    aliases: list[Text] = []
    summary: Annotated[str, Meta(min_length=1, max_length=1000)]
    jurisdictions: list[Jurisdiction] = []
    products: list[Product] = []
    operators: list[Operator] = []
    related: list[Slug] = []
    formulas: list[FormulaId] = []
    wagering: bool
    reviewed_at: date
    review_due: date
    source: Text  # who stands behind the text
    status: Status
    sources: Annotated[list[Source], Meta(min_length=1)]


class LibraryEntry(msgspec.Struct, frozen=True, kw_only=True):
    """An entry as the log carries it: the front matter, the body, and where it lives."""

    slug: str
    kind: Kind
    title: str
    aliases: list[str]
    summary: str
    body: str
    jurisdictions: list[str]
    products: list[str]
    operators: list[str]
    related: list[str]  # slugs
    formulas: list[str]  # formula card IDs
    wagering: bool
    reviewed_at: date
    review_due: date
    source: str
    status: Status
    sources: list[Source]


# legal and tax entries must say what they are (the library informs, it does not advise)
_NOTICES = {"law": "not legal advice", "tax": "not tax advice"}


def entry_id(slug: str) -> str:
    return natural_id("reference", slug)


def load_entry(kind: str, slug: str, text: str) -> LibraryEntry:
    """The entry a file holds (`kind`: its folder, `slug`: its name without `.md`)."""
    if kind not in KINDS:
        raise EntryError(f"folder {kind!r} is not a kind ({', '.join(KINDS)})")
    if not _SLUG.match(slug):
        raise EntryError(f"file name {slug!r} is not a slug (lower-case letters, digits and hyphens)")
    header, body = split_front_matter(text)
    meta = load_toml(header, FrontMatter)
    body = body.strip()
    if not body:
        raise EntryError("the body is empty")
    check_review(meta.reviewed_at, meta.review_due)
    check_sources(meta.sources)
    check_unique(aliases=meta.aliases, jurisdictions=meta.jurisdictions, products=meta.products,
                 operators=meta.operators, related=meta.related, formulas=meta.formulas)
    if slug in meta.related:
        raise EntryError("related names the entry itself")
    notice = _NOTICES.get(kind)
    if notice is not None and notice not in " ".join(body.split()).lower():
        raise EntryError(f"a {kind} entry must say plainly that it is information, {notice}")
    return LibraryEntry(
        slug=slug, kind=kind, title=meta.title, aliases=meta.aliases, summary=meta.summary, body=body,  # type: ignore[arg-type]
        jurisdictions=meta.jurisdictions, products=list(meta.products), operators=meta.operators,
        related=meta.related, formulas=meta.formulas, wagering=meta.wagering, reviewed_at=meta.reviewed_at,
        review_due=meta.review_due, source=meta.source, status=meta.status, sources=meta.sources,
    )


def content_hash(entry: LibraryEntry) -> str:
    """What the entry says: everything but its review dates and status. `version` moves when
    this does; a re-review that changes nothing else keeps the version."""
    return digest(msgspec.structs.replace(entry, reviewed_at=date(1970, 1, 1), review_due=date(1970, 1, 1),
                                          status="published"))


def file_hash(entry: LibraryEntry) -> str:
    """Everything the file says (a change of review date too): a new revision when this moves."""
    return digest(entry)
