"""The baseline of bench_wire_memory: the least an ASGI WebSocket costs under a server. It accepts,
says hello and waits for the close; `/health` answers as the API does, so tests.support.live_server
can start it. Closed, it gives memory back as the API does (infra/memory.py): without, glibc keeps
the first round's, the second round reuses it and seems to cost nothing."""

from __future__ import annotations

from infra.memory import release_after_close


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            done = "startup" if message["type"] == "lifespan.startup" else "shutdown"
            await send({"type": f"lifespan.{done}.complete"})
            if done == "shutdown":
                return
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": b'{"db": true}'})
        return
    await receive()  # websocket.connect
    await send({"type": "websocket.accept", "subprotocol": "svc.v1"})
    await send({"type": "websocket.send", "text": '{"op": "hello"}'})
    while (await receive())["type"] != "websocket.disconnect":
        pass
    release_after_close(0)
