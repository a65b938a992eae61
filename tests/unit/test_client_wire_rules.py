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


async def test_a_socket_given_up_on_is_dropped_before_the_next_attempt(monkeypatch):
    """A server that never says hello (overloaded, say): each attempt's socket is closed before
    the next, so retries never pile up open sockets (they count against the address's limit)."""
    import asyncio
    from types import SimpleNamespace

    from websockets.asyncio.server import serve

    from client import wire

    monkeypatch.setattr(wire, "HELLO_SECONDS", 0.2)
    open_now, seen = set(), []

    async def handler(conn) -> None:
        open_now.add(conn)
        seen.append(conn)
        try:
            await conn.wait_closed()
        finally:
            open_now.discard(conn)

    async with serve(handler, "127.0.0.1", 0, subprotocols=["svc.v1"]) as server:
        port = server.sockets[0].getsockname()[1]
        owner = SimpleNamespace(_core=SimpleNamespace(base_url=f"http://127.0.0.1:{port}"))
        sub = Subscription(owner, ["game:gm_x"], None, max_backoff=0.05)
        sub.session_id, sub.resume_token = "ses_x", "tok_x"  # resuming: no ticket to mint
        attempts = asyncio.create_task(sub._connected())
        # the server sees a socket once its handshake is done, a moment before the client's
        # connect returns and counts the resume: wait for both sides to have seen three
        for _ in range(200):
            if len(seen) >= 3 and sub.resumes >= 3:
                break
            await asyncio.sleep(0.05)
        assert len(seen) >= 3 and sub.resumes >= 3 and len(open_now) <= 1  # at most the attempt under way is open
        attempts.cancel()
        await asyncio.gather(attempts, return_exceptions=True)
        for _ in range(100):
            if not open_now:
                break
            await asyncio.sleep(0.05)
        assert not open_now and sub.resumes >= 3
