"""The Wire client's seq rules (client/wire.py) on scripted messages: a duplicate is dropped, a
gap drops the topic's state and asks for a fresh snapshot, deltas before a snapshot are ignored,
and the new snapshot starts the topic over. Against the real Wire: tests/integration/test_client_wire.py."""

from __future__ import annotations

import json

from client.wire import Subscription, TopicStream


class Socket:
    def __init__(self) -> None:
        self.sent: list[dict] = []

    async def send(self, text: str) -> None:
        self.sent.append(json.loads(text))


def _game(op: str, seq: int, status: str) -> dict:
    return {"op": op, "type": "game.state", "topic": "game:gm_x", "seq": seq, "source": "t",
            "source_ts": None, "emit_ts": "2024-09-05T12:00:00Z", "data": {"game_id": "gm_x", "status": status}}


async def test_duplicates_gaps_and_snapshots_follow_the_gap_rule():
    sub, ws = Subscription(None, ["game:gm_x"], None), Socket()
    assert await sub._apply(ws, _game("delta", 4, "live")) is None  # before any snapshot: ignored
    assert (await sub._apply(ws, _game("snapshot", 5, "scheduled"))).state["status"] == "scheduled"
    assert (await sub._apply(ws, _game("delta", 6, "live"))).seq == 6
    assert await sub._apply(ws, _game("delta", 6, "final")) is None  # a duplicate
    assert sub.states["game:gm_x"]["status"] == "live" and ws.sent == []
    assert await sub._apply(ws, _game("delta", 8, "final")) is None  # seq 7 missing: a gap
    assert "game:gm_x" not in sub.states and "game:gm_x" not in sub.seqs
    assert ws.sent == [{"op": "subscribe", "topics": ["game:gm_x"], "request_id": "gap"}]
    assert await sub._apply(ws, _game("delta", 9, "final")) is None  # until the fresh snapshot
    assert (await sub._apply(ws, _game("snapshot", 9, "final"))).seq == 9
    assert (await sub._apply(ws, _game("delta", 10, "final"))).seq == 10 and sub.snapshots == 2


def test_the_sse_stream_reopens_on_a_gap_and_ignores_other_events():
    stream = TopicStream(None, "game:gm_x", None)
    assert stream._apply({"topic": "game:gm_x", "expected_latency": {}}) is None  # a feed notice
    assert stream._apply(_game("snapshot", 3, "scheduled")).seq == 3
    assert stream._apply(_game("delta", 3, "live")) is None
    assert stream._apply(_game("delta", 5, "live")) is False  # reopen from seq 3
    assert stream.seq == 3 and stream.state["status"] == "scheduled"
