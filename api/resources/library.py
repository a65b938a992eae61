"""The reference entry record (ours to design; docs/reference.md describes it)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from typing import Annotated, Any

import msgspec

from api.conventions import RG_LINE
from api.resources.common import Meta, Provenance, provenance, utc
from domain.formula_cards import CARDS

_CARD_REFS = {c.id: c.ref for c in CARDS}


class EntrySource(msgspec.Struct, kw_only=True):
    """Where a reader can check the entry (a URL; a path starting with `/` is this service's own)."""

    title: str
    publisher: str
    url: str
    published_on: date | None = None
    accessed_on: date | None = None


class ReferenceEntry(Meta, kw_only=True, tag_field="object", tag="reference_entry"):
    id: Annotated[str, msgspec.Meta(description="`ref_` ID (the hash of the slug: stable while the slug is).")]
    slug: Annotated[str, msgspec.Meta(description="The entry's name in paths: `GET /v1/reference/{slug}` works too.")]
    kind: Annotated[str, msgspec.Meta(description="term, rule, law, tax, policy, guide or help.")]
    title: str
    aliases: Annotated[list[str], msgspec.Meta(description="Other names people search for (`juice` for vig).")]
    summary: Annotated[str, msgspec.Meta(description="One or two sentences.")]
    body: Annotated[str, msgspec.Meta(description="Markdown. Law and tax entries say they are information, not advice.")]
    jurisdictions: Annotated[list[str], msgspec.Meta(description="ISO 3166 codes (country or subdivision); empty: general.")]
    products: list[str]
    operators: Annotated[list[str], msgspec.Meta(description="Operator slugs the entry is about (house rules cited).")]
    sources: list[EntrySource]
    reviewed_at: Annotated[date, msgspec.Meta(description="The day the entry was last checked against its sources.")]
    review_due: date
    stale: Annotated[bool, msgspec.Meta(description="True once `review_due` has passed (UTC day).")]
    version: Annotated[int, msgspec.Meta(description="Moves when what the entry says changes (text, sources, "
                                                     "metadata); a re-review alone keeps it.")]
    related: Annotated[list[str], msgspec.Meta(description="`ref_` IDs of related published entries.")]
    formulas: Annotated[list[str], msgspec.Meta(description="Formula cards (`id@version`) the entry explains.")]
    provenance: Provenance


_sources = msgspec.json.Decoder(list[EntrySource])


def _sources_of(raw: Any) -> list[EntrySource]:
    if isinstance(raw, str):
        return _sources.decode(raw)
    return msgspec.convert(raw, list[EntrySource])


def reference_entry(row: Mapping[str, Any], request_id: str | None, today: date) -> ReferenceEntry:
    as_of: datetime = utc(row["as_of"])  # type: ignore[assignment]
    return ReferenceEntry(
        as_of=as_of, source=row["source"], stale_after_ms=None, attribution=None, request_id=request_id,
        live_topics=[], rg_line=RG_LINE if row["wagering"] else None,
        id=row["id"], slug=row["slug"], kind=row["kind"], title=row["title"], aliases=list(row["aliases"]),
        summary=row["summary"], body=row["body"], jurisdictions=list(row["jurisdictions"]),
        products=list(row["products"]), operators=list(row["operators"]), sources=_sources_of(row["sources"]),
        reviewed_at=row["reviewed_at"], review_due=row["review_due"], stale=row["review_due"] < today,
        version=row["version"], related=list(row["related"]),
        formulas=[_CARD_REFS.get(f, f) for f in row["formulas"]],
        provenance=provenance(row["provenance"], row["source"], as_of),
    )
