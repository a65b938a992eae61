"""The reference library's entry: the file format, its validation, and the entry as the log holds it.

An entry is one Markdown file, `<kind>/<slug>.md` under the library root: TOML front matter
between two `+++` lines, then the body. `load_entry` turns a file's text into a `LibraryEntry`
or raises `EntryError` with the reason (the ingest dead-letters it with its path). Pure: no I/O;
`ingest/library.py` reads the files.

The entry's ID is `ref_` plus the hash of its slug (schemas.ids.natural_id), so renaming a file
is retiring one entry and publishing another.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from datetime import date
from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from schemas.ids import natural_id

KINDS: tuple[str, ...] = ("term", "rule", "law", "tax", "policy", "guide", "help")
Kind = Literal["term", "rule", "law", "tax", "policy", "guide", "help"]
# spec 4.3's product enum, plus `exchange` (betting exchanges: several rules and terms are about them)
PRODUCTS: tuple[str, ...] = (
    "sportsbook", "dfs", "pickem", "prediction_market", "sweepstakes", "season_fantasy", "horse_racing",
    "online_casino", "lottery", "exchange",
)
Product = Literal[
    "sportsbook", "dfs", "pickem", "prediction_market", "sweepstakes", "season_fantasy", "horse_racing",
    "online_casino", "lottery", "exchange",
]
Status = Literal["published", "draft", "retired"]

# spec 4.3: ISO 3166 code, two letters optionally followed by a hyphen and 1 to 3 letters or
# digits (any case in a query; files hold the canonical upper case)
JURISDICTION = r"^[A-Za-z]{2}(-[A-Za-z0-9]{1,3})?$"
CANONICAL_JURISDICTION = r"^[A-Z]{2}(-[A-Z0-9]{1,3})?$"
OPERATOR = r"^[a-z][a-z0-9_]{1,39}$"  # spec 4.3: lower-case letter first, 2 to 40 in all
SLUG = r"^[a-z0-9][a-z0-9-]{0,99}$"
FORMULA = r"^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$"  # a formula card's ID, such as devig.shin
_SLUG = re.compile(SLUG)

Text = Annotated[str, Meta(min_length=1, max_length=500)]
Slug = Annotated[str, Meta(pattern=SLUG)]
Jurisdiction = Annotated[str, Meta(pattern=CANONICAL_JURISDICTION)]
Operator = Annotated[str, Meta(pattern=OPERATOR)]
FormulaId = Annotated[str, Meta(pattern=FORMULA)]
Url = Annotated[str, Meta(min_length=2, max_length=2000, pattern=r"^(https?://\S+|/\S*)$")]


class Source(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Where a reader can check the entry: a URL, or a path of this service (a formula card)."""

    title: Text
    publisher: Text
    url: Url
    published_on: date | None = None
    accessed_on: date | None = None


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


class EntryError(ValueError):
    """The file is not a valid entry; the message is the reason a dead letter carries."""


# legal and tax entries must say what they are (the library informs, it does not advise)
_NOTICES = {"law": "not legal advice", "tax": "not tax advice"}


def entry_id(slug: str) -> str:
    return natural_id("reference", slug)


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


def _where(exc: msgspec.ValidationError) -> str:
    # msgspec says "... - at `$.sources[0].url`"; the header has no `$`, say the key instead
    return str(exc).replace("`$.", "`").replace("`$`", "the front matter")


def load_entry(kind: str, slug: str, text: str) -> LibraryEntry:
    """The entry a file holds (`kind`: its folder, `slug`: its name without `.md`)."""
    if kind not in KINDS:
        raise EntryError(f"folder {kind!r} is not a kind ({', '.join(KINDS)})")
    if not _SLUG.match(slug):
        raise EntryError(f"file name {slug!r} is not a slug (lower-case letters, digits and hyphens)")
    header, body = split_front_matter(text)
    try:
        raw = tomllib.loads(header)
    except tomllib.TOMLDecodeError as exc:
        raise EntryError(f"front matter is not TOML: {exc}") from None
    try:
        meta = msgspec.convert(raw, FrontMatter)
    except msgspec.ValidationError as exc:
        raise EntryError(_where(exc)) from None
    body = body.strip()
    if not body:
        raise EntryError("the body is empty")
    if meta.review_due < meta.reviewed_at:
        raise EntryError("review_due is before reviewed_at")
    for i, s in enumerate(meta.sources):
        if s.published_on is None and s.accessed_on is None:
            raise EntryError(f"sources[{i}] needs published_on or accessed_on")
    for name, values in (("aliases", meta.aliases), ("jurisdictions", meta.jurisdictions),
                         ("products", meta.products), ("operators", meta.operators), ("related", meta.related),
                         ("formulas", meta.formulas)):
        if len(set(values)) != len(values):
            raise EntryError(f"{name} lists a value twice")
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


_encoder = msgspec.json.Encoder(order="deterministic")


def content_hash(entry: LibraryEntry) -> str:
    """What the entry says: everything but its review dates and status. `version` moves when
    this does; a re-review that changes nothing else keeps the version."""
    bare = msgspec.structs.replace(entry, reviewed_at=date(1970, 1, 1), review_due=date(1970, 1, 1),
                                   status="published")
    return hashlib.blake2b(_encoder.encode(bare), digest_size=16).hexdigest()


def file_hash(entry: LibraryEntry) -> str:
    """Everything the file says (a change of review date too): a new revision when this moves."""
    return hashlib.blake2b(_encoder.encode(entry), digest_size=16).hexdigest()
