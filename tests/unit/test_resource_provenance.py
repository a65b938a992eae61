"""Provenance objects from read-model columns: decoded JSON or JSON text give the same object,
and an incomplete or foreign column still yields a complete one."""

from __future__ import annotations

from datetime import datetime, timezone

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from api.resources.common import KnownBy, Provenance, provenance

AS_OF = datetime(2024, 9, 8, 17, 0, tzinfo=timezone.utc)

_stamp = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1)).map(
    lambda d: d.replace(tzinfo=timezone.utc).isoformat().replace("+00:00", "Z")
)
_column = st.fixed_dictionaries(
    {},
    optional={
        "source": st.sampled_from(["nflverse", "The Odds API", ""]),
        "source_ts": st.one_of(_stamp, st.just("2024-09-08T19:00:00+02:00"), st.just("yesterday"), st.none()),
        "ingest_ts": st.one_of(_stamp, st.none()),
        "known_by": st.lists(st.fixed_dictionaries({"source": st.just("nflverse"), "source_id": st.text(max_size=8)}),
                             max_size=2),
    },
)


@given(_column)
def test_text_and_decoded_columns_give_the_same_object(column):
    text = msgspec.json.encode(column).decode()
    from_text = provenance(text, "fallback", AS_OF)
    assert from_text == provenance(column, "fallback", AS_OF)
    # always complete and in UTC; a stored null source time stays null (the source gave none)
    assert from_text.source
    if "source_ts" in column and column["source_ts"] is None:
        assert from_text.source_ts is None
    else:
        assert from_text.source_ts.utcoffset().total_seconds() == 0
    assert from_text.ingest_ts.utcoffset().total_seconds() == 0


def test_the_usual_column_and_the_fallbacks():
    full = ('{"source":"nflverse","source_ts":"2024-09-05T12:00:00Z","ingest_ts":"2024-09-06T00:00:00Z",'
            '"known_by":[{"source":"nflverse","source_id":"2024_01_BAL_KC"}]}')
    assert provenance(full, "x", AS_OF) == Provenance(
        source="nflverse", source_ts=datetime(2024, 9, 5, 12, tzinfo=timezone.utc),
        ingest_ts=datetime(2024, 9, 6, tzinfo=timezone.utc), known_by=[KnownBy(source="nflverse", source_id="2024_01_BAL_KC")],
    )
    for broken in (None, "", "not json", "[]", "{}"):
        assert provenance(broken, "The Odds API", AS_OF) == Provenance(
            source="The Odds API", source_ts=AS_OF, ingest_ts=AS_OF, known_by=[]
        )
    offset = provenance('{"source":"s","source_ts":"2024-09-08T19:00:00+02:00","ingest_ts":"2024-09-08T17:00:00Z"}',
                        "x", AS_OF)
    assert offset.source_ts == AS_OF and offset.source_ts.utcoffset().total_seconds() == 0
