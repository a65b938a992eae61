"""Deltas the reducers emit conform to the payload Structs the AsyncAPI document is built from."""

from __future__ import annotations

import msgspec

from projections.reducers import reduce
from wire.asyncapi import document
from schemas.wire import SnapshotEnvelope, DATA_BY_TYPE, Envelope
from tests.support import projection_events as ev

WINDOW_US = 3600 * 1_000_000


def deltas_of(events):
    state, out = None, []
    for e in events:
        state, emitted = reduce(state, e, WINDOW_US)
        out.extend(emitted)
    return out


def test_every_delta_type_validates_strictly_against_its_payload_struct():
    game = ev.game()
    gid = game.game_id
    first = ev.quote(gid, "a", [-110, -110], market_type="spreads", point="-3", minute=1)
    events = [
        game,
        first,
        ev.quote(gid, "b", [-105, -115], market_type="spreads", point="-3", minute=2),
        ev.quote(gid, "b", [-110, -110], market_type="spreads", point="-3.5", minute=3),
        ev.state(gid, "live", minute=4, home=7, away=0),
        ev.suspended(gid, first.market_id, minute=5),
        ev.reopened(gid, first.market_id, minute=6),
        ev.state(gid, "final", minute=200, home=27, away=20),
    ]
    deltas = deltas_of(events)
    # every type the projector makes was exercised (`answer.update` is the API's: test_answers_live)
    assert {d.type for d in deltas} == set(DATA_BY_TYPE) - {"answer.update"}
    for delta in deltas:
        wire = msgspec.json.decode(msgspec.json.encode(delta.data))  # as it travels
        struct = DATA_BY_TYPE[delta.type]
        msgspec.convert(wire, struct, strict=False)
        assert set(wire) == set(struct.__struct_encode_fields__)  # every member emitted is documented (by its Wire name)
    final = msgspec.convert(msgspec.json.decode(msgspec.json.encode(deltas[-1].data)), DATA_BY_TYPE["game.state"])
    assert final.status == "final" and (final.score.home, final.score.away) == (27, 20)


def test_a_payload_missing_a_member_is_refused():
    wire = msgspec.json.decode(msgspec.json.encode(deltas_of([ev.game()])[0].data))
    del wire["status"]
    try:
        msgspec.convert(wire, DATA_BY_TYPE["game.state"])
    except msgspec.ValidationError as exc:
        assert "status" in str(exc)
    else:
        raise AssertionError("a game.state payload without status was accepted")


def test_asyncapi_document_names_every_delta_the_envelopes_and_the_stream():
    doc = document("1.2.3")
    assert doc["asyncapi"] == "3.0.0" and doc["info"]["version"] == "1.2.3"
    ops = {"auth", "resume", "subscribe", "unsubscribe", "list_subscriptions", "pong", "hello", "ack", "error",
           "warning", "ping", "drain", "resume_failed", "feed"}  # the socket's control messages, every one
    assert set(doc["components"]["messages"]) == (
        {t.replace(".", "_") for t in DATA_BY_TYPE} | {"snapshot"} | {f"control_{op}" for op in ops})
    assert set(Envelope.__struct_fields__) <= set(doc["components"]["schemas"]["Envelope"]["properties"])
    snapshot = doc["components"]["schemas"]["SnapshotEnvelope"]["properties"]
    assert set(SnapshotEnvelope.__struct_fields__) == set(snapshot)
    channels = {c["address"]: c for c in doc["channels"].values()}
    assert set(channels) == {"wire.deltas", "test.wire.deltas", "/v1/stream/{topic}", "/v1/wire"}
    assert "snapshot" not in channels["wire.deltas"]["messages"]  # Kafka carries deltas only
    assert set(channels["/v1/stream/{topic}"]["messages"]) == (
        {t.replace(".", "_") for t in DATA_BY_TYPE} | {"snapshot", "control_feed"})
    assert set(channels["/v1/wire"]["messages"]) == set(doc["components"]["messages"])
    sent = {ref["$ref"].rsplit("/", 1)[1] for ref in doc["operations"]["sendSocket"]["messages"]}
    assert sent == {f"control_{op}" for op in ("auth", "resume", "subscribe", "unsubscribe", "list_subscriptions", "pong")}
