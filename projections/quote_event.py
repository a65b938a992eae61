"""How the projector decodes a price quote: `schemas.events.PriceQuoted` with its decimals
(the line's point, each outcome's price and point) left as the JSON strings they are on the log.

Most of any log is quotes, and a quote's decimals are few distinct values (prices like "-110",
half-point lines): decoded as `Decimal`, each was a new object built and then hashed for the
caches that turn it into odds and line keys, a tenth of the fold. Left as text, the fold turns
each into one shared `Decimal` through `projections.quotes.decimal_of`, a dict lookup by the
string (whose hash is cheap), and the caches hash a `Decimal` that has hashed itself before.
A quote whose decimal text is not a decimal is decoded again by the canonical decoder, which
rejects it as before (`batch.BatchCore.feed`).

The types are derived from the schema's, field by field (names, defaults, tags, validation of
every other field), with only `Decimal` swapped for `str`: the event's shape stays defined once.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Union, get_args

import msgspec

from schemas.events import AnyEvent, Outcome, PriceQuoted


def _lean(struct: type, swap: dict, **config) -> type:
    fields = []
    for f in msgspec.structs.fields(struct):
        kind = swap.get(f.type, f.type)
        if f.default is not msgspec.NODEFAULT:
            fields.append((f.name, kind, f.default))
        elif f.default_factory is not msgspec.NODEFAULT:
            fields.append((f.name, kind, msgspec.field(default_factory=f.default_factory)))
        else:
            fields.append((f.name, kind))
    return msgspec.defstruct(struct.__name__, fields, module=__name__, frozen=True, kw_only=True, gc=False,
                             **config)


_DECIMALS = {Decimal: str, Decimal | None: str | None}
QuotedOutcomeText = _lean(Outcome, _DECIMALS)
QuoteEvent = _lean(PriceQuoted, {**_DECIMALS, list[Outcome]: list[QuotedOutcomeText]},  # type: ignore[valid-type]
                   tag_field=PriceQuoted.__struct_config__.tag_field, tag=PriceQuoted.__struct_config__.tag)

# every canonical event type, the quote decoded as above
decoder = msgspec.json.Decoder(Union[tuple(QuoteEvent if t is PriceQuoted else t for t in get_args(AnyEvent))])
