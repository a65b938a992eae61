"""Socket control messages, sessions for resume and the inbound rate: pure."""

from __future__ import annotations

import msgspec
import pytest

from wire import messages as m
from wire.sessions import Sessions


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


def test_a_session_resumes_once_per_token_within_the_window():
    sessions = Sessions(resume_seconds=120)
    s = sessions.open("grant", expires_at=1000, now=0)
    token = sessions.new_token(s)
    assert sessions.resume(s.session_id, token, now=1) is None  # still attached
    sessions.detach(s, now=10)
    assert sessions.resume(s.session_id, "wrong", now=11) is None
    assert sessions.resume(s.session_id, token, now=11) is s
    new = sessions.new_token(s)
    sessions.detach(s, now=20)
    assert sessions.resume(s.session_id, token, now=21) is None  # the old token is spent
    assert sessions.resume(s.session_id, new, now=141) is None  # 121 s detached: gone
    assert len(sessions) == 0


def test_a_session_ends_with_its_connection_lifetime():
    sessions = Sessions()
    s = sessions.open("grant", expires_at=50, now=0)
    token = sessions.new_token(s)
    sessions.detach(s, now=40)
    assert sessions.resume(s.session_id, token, now=51) is None


def test_inbound_messages_per_sliding_second():
    inflow = m.Inflow(per_second=3)
    assert [inflow.admit(t) for t in (0, 0.1, 0.2, 0.3)] == [True, True, True, False]
    assert inflow.admit(1.05) is True  # 0 has left the second
