"""Where the log keeps each event: its feed topic and its record key, one rule per event type,
declared by the type (schemas/events.py) and checked at import. An event of a type the log does
not know is a clear error (`UnregisteredEvent`), and where records arrive its record is
dead-lettered with that reason while the rest of the file goes on."""

from __future__ import annotations

import typing
from datetime import datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.batches import RunState, batched, build, collect
from ingest.records import Record
from ingest.resolution import MemoryResolver
from schemas import events as ev
from schemas.datasets import FEED_GAMES, FEED_PLAYERS, FEED_REFERENCE, FEED_TEAMS

TS = datetime(2030, 9, 8, 17, 0, tzinfo=timezone.utc)
REGISTERED = typing.get_args(ev.AnyEvent)
# the rule per event type, as the log has always keyed and routed them
EXPECTED = {
    "TeamRegistered": ("team_id", FEED_TEAMS),
    **{n: ("game_id", FEED_GAMES) for n in ("GameScheduled", "GameRescheduled", "GameStateChanged", "PriceQuoted",
                                           "MarketSuspended", "MarketReopened")},
    **{n: ("player_id", FEED_PLAYERS) for n in ("PlayerRegistered", "PlayerUpdated", "InjuryReported",
                                               "NewsPublished", "StatLineRecorded")},
    **{f"{kind}{step}": ("entry_id", FEED_REFERENCE) for kind in ("Reference", "Strategy", "Recipe")
       for step in ("Published", "Revised", "Retired")},
}


class TeamRenamed(ev.Event, kw_only=True, frozen=True, tag="team.renamed"):
    """A new event type with no team_id, declaring no rule and not in AnyEvent (issue 21/26)."""

    name: str


class GameNoted(ev.GameEvent, kw_only=True, frozen=True, tag="game.noted"):
    """Declares a rule (a game event) but is not in AnyEvent: the log could not decode it."""

    game_id: str
    note: str


def _team(team_id: str = "tm_1") -> ev.TeamRegistered:
    return ev.TeamRegistered(source="test", source_id=team_id, source_ts=TS, ingest_ts=TS, team_id=team_id,
                             sport="american_football", competition="nfl", name="Team")


def test_every_registered_type_declares_the_rule_it_has_always_had():
    assert {t.__name__ for t in REGISTERED} == set(EXPECTED)
    for t in REGISTERED:
        assert (t.key_field, t.feed) == EXPECTED[t.__name__], t


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(REGISTERED).flatmap(st.from_type))
def test_any_event_of_any_registered_type_is_keyed_and_routed_by_its_type(event):
    kind = type(event)
    assert ev.event_key(event) == getattr(event, kind.key_field) and isinstance(ev.event_key(event), str)
    assert ev.event_topic(event) == kind.feed
    ev.require_registered([event])


@pytest.mark.parametrize("event", [
    TeamRenamed(source="test", source_id="1", source_ts=TS, ingest_ts=TS, name="New name"),
    GameNoted(source="test", source_id="1", source_ts=TS, ingest_ts=TS, game_id="gm_1", note="x"),
])
def test_an_unregistered_type_is_a_clear_error_not_an_attribute_error(event):
    for ask in (ev.event_key, ev.event_topic, lambda e: ev.require_registered([_team(), e])):
        with pytest.raises(ev.UnregisteredEvent, match=f"{type(event).__name__} .* not a registered event type"):
            ask(event)


def test_a_type_without_a_rule_cannot_be_registered(monkeypatch):
    # what the import-time check says of AnyEvent naming a type that declares no rule
    monkeypatch.setattr(ev, "AnyEvent", typing.Union[ev.TeamRegistered, TeamRenamed])
    with pytest.raises(TypeError, match="TeamRenamed must declare `feed`"):
        ev._routes()


def test_a_record_building_an_unregistered_event_is_dead_lettered_and_the_file_goes_on():
    renamed = TeamRenamed(source="test", source_id="2", source_ts=TS, ingest_ts=TS, name="New name")
    records = [
        Record(0, "line 1", "raw 1", lambda _r: [_team("tm_1")]),
        Record(1, "line 2", "raw 2", lambda _r: [_team("tm_2"), renamed]),  # the whole record goes
        Record(2, "line 3", "raw 3", lambda _r: [_team("tm_3")]),
    ]
    collected = collect(iter(records), MemoryResolver())
    assert [e.team_id for e in collected.events] == ["tm_1", "tm_3"]
    (rejected,) = collected.rejected
    assert (rejected.index, rejected.location, rejected.raw) == (1, "line 2", "raw 2")
    assert rejected.reason.startswith("TeamRenamed (type 'team.renamed') is not a registered event type")
    # what the producer is handed: every event keyed and routed by its rule
    (batch,) = batched(iter(records))
    built = build(batch, MemoryResolver().resolve_now(batch.records), RunState())
    assert built.keyed() == [(FEED_TEAMS, b"tm_1", built.values[0]), (FEED_TEAMS, b"tm_3", built.values[1])]
