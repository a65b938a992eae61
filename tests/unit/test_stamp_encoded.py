"""`stamp_encoded` writes the ID and ingest time into the bytes the ID was hashed from: the
result must be exactly `stamp` and `encode(stamp(...))`, whatever the event's text holds."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from schemas.events import PriceQuoted, TeamRegistered, encode, stamp, stamp_encoded, stamp_value
from tests.support.sample_fold import sample_events

# text that looks like the two fields written in place, as a hostile source could send it
LOOKALIKES = ['"event_id":""', '","ingest_ts":"1970-01-01T00:00:00Z"', '"ingest_ts":"1970-01-01T00:00:00Z"',
              '\\"event_id\\":\\"\\"', "evt_", ""]
TEXT = st.one_of(st.sampled_from(LOOKALIKES), st.text(max_size=40),
                 st.lists(st.sampled_from(LOOKALIKES), max_size=3).map("".join))
TIMES = st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2100, 1, 1),
                     timezones=st.sampled_from([timezone.utc, timezone(timedelta(hours=-5)), timezone(timedelta(0))]))


def _same(event) -> None:
    stamped, value = stamp_encoded(event)
    assert stamped == stamp(event)
    assert value == encode(stamp(event))
    if not event.event_id:  # from the bytes alone, as ingest's run stamps what its worker encoded
        assert stamp_value(encode(event)) == (stamped.event_id, value)


def test_every_sample_event_is_stamped_and_encoded_as_by_the_two_steps():
    events = sample_events()
    assert {type(e).__name__ for e in events} >= {"TeamRegistered", "GameScheduled", "PriceQuoted"}
    for e in events:
        _same(msgspec.structs.replace(e, event_id=""))
        _same(e)  # an event that already has an ID gets the one its content gives


@given(source=TEXT, source_id=TEXT, name=TEXT, ingest_ts=TIMES, source_ts=TIMES, event_id=TEXT)
def test_text_that_looks_like_the_fields_does_not_move_them(source, source_id, name, ingest_ts, source_ts, event_id):
    team = TeamRegistered(source=source, source_id=source_id, source_ts=source_ts, ingest_ts=ingest_ts,
                          event_id=event_id, team_id="tm_1", sport="american_football", competition="nfl", name=name,
                          aliases=[name], known_by=[])
    _same(team)
    quote = next(e for e in sample_events() if isinstance(e, PriceQuoted))
    _same(msgspec.structs.replace(quote, source=source, source_id=source_id, ingest_ts=ingest_ts, book_name=name))


def test_the_same_instant_in_another_zone_is_encoded_as_given():
    # stamp_encoded keeps the last ingest time's encoding: an equal time in another zone is
    # a different object and must be encoded afresh
    utc = datetime(2031, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    east = utc.astimezone(timezone(timedelta(hours=2)))
    assert utc == east
    quote = next(e for e in sample_events() if isinstance(e, PriceQuoted))
    for ts in (utc, east, utc, utc, east):
        _same(msgspec.structs.replace(quote, event_id="", ingest_ts=ts))
    assert b"+02:00" in stamp_encoded(msgspec.structs.replace(quote, event_id="", ingest_ts=east))[1]
