"""Socket control messages and the inbound rate: pure."""

from __future__ import annotations

import msgspec
import pytest

from wire import messages as m


def test_client_messages_decode_by_op_and_ignore_unknown_members():
    assert m.decode('{"op": "auth", "ticket": "wtkt_x", "extra": 1}') == m.Auth(ticket="wtkt_x")
    assert m.decode('{"op": "subscribe", "topics": ["game:a"], "request_id": "r"}') == m.Subscribe(["game:a"], "r")
    assert m.decode('{"op": "resume", "session_id": "s", "resume_token": "t", "last_seq": {"game:a": 3}}') == \
        m.Resume("s", "t", {"game:a": 3})
    for bad in ('{"op": "warp"}', '{"topics": []}', "not json", '{"op": "subscribe"}', '{"op": "subscribe", "topics": 1}'):
        with pytest.raises(m.BadMessage):
            m.decode(bad)


def test_server_messages_carry_their_op():
    assert msgspec.json.decode(m.encode(m.Ack(request_id=None, topics=["a"]))) == {"op": "ack", "request_id": None,
                                                                                  "topics": ["a"]}
    error = msgspec.json.decode(m.encode(m.ErrorMessage(code="not_found", topic="game:x")))
    assert error == {"op": "error", "code": "not_found", "topic": "game:x"}


def test_inbound_messages_per_sliding_second():
    inflow = m.Inflow(per_second=3)
    assert [inflow.admit(t) for t in (0, 0.1, 0.2, 0.3)] == [True, True, True, False]
    assert inflow.admit(1.05) is True  # 0 has left the second
