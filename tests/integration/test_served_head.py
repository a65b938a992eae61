"""HEAD on a streaming route, served by each server SVC_API_SERVER offers (infra/api_server.py):
the answer is GET's status and headers and nothing more (RFC 9110 9.3.2), so the connection
stays usable for the next request. The in-process tests (test_api_http_details) cannot see this:
it is the server that frames the response, from the method it was told."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

import h11
import pytest

from infra.api_server import SERVERS
from tests.integration.test_wire_stream import BOOKS, GAMES, TOPIC, ticket
from tests.integration.wire_support import wire_stack
from tests.support import projection_events as ev


async def _exchange(base: str, requests: list[tuple[str, str]]) -> list[tuple[h11.Response, bytes]]:
    """`requests` (method, target) one after another on one keep-alive connection, each answer
    read to its end as an HTTP/1.1 client must frame it (h11: a HEAD's answer has no body)."""
    url = urlsplit(base)
    reader, writer = await asyncio.open_connection(url.hostname, url.port)
    client = h11.Connection(h11.CLIENT)
    answers = []
    try:
        for method, target in requests:
            writer.write(client.send(h11.Request(method=method, target=target, headers=[("Host", url.netloc)])))
            writer.write(client.send(h11.EndOfMessage()))
            response, body = None, b""
            while True:
                event = client.next_event()
                if event is h11.NEED_DATA:
                    client.receive_data(await asyncio.wait_for(reader.read(65536), 20))
                elif isinstance(event, h11.Response):
                    response = event
                elif isinstance(event, h11.Data):
                    body += event.data
                elif isinstance(event, h11.EndOfMessage):
                    break
            answers.append((response, body))
            client.start_next_cycle()  # h11 refuses if the server's framing left the connection unusable
    finally:
        writer.close()
    return answers


@pytest.mark.parametrize("server", SERVERS)
async def test_head_on_a_stream_is_its_head_and_the_connection_serves_the_next_request(settings, topics, tmp_path,
                                                                                   server):
    async with wire_stack(settings, tmp_path, [*GAMES, *ev.season_quotes(GAMES, BOOKS, 1, seed=3)],
                          SVC_API_SERVER=server) as (c, key, base):
        spent = await ticket(c, key)
        (head, head_body), (health, health_body) = await _exchange(
            base, [("HEAD", f"/v1/stream/{TOPIC}?ticket={spent}"), ("GET", "/health")])
        assert head.status_code == 200 and head_body == b""
        assert dict(head.headers)[b"content-type"].startswith(b"text/event-stream")
        # the next answer on the same connection is read as sent: nothing of the stream's was left before it
        assert health.status_code == 200 and b'"db"' in health_body
        # a HEAD answered with an error (its body left out) leaves the connection as usable
        (refused, refused_body), (again, _) = await _exchange(
            base, [("HEAD", f"/v1/stream/{TOPIC}"), ("GET", "/health")])
        assert refused.status_code == 401 and refused_body == b""
        assert int(dict(refused.headers)[b"content-length"]) > 0  # GET's length, not the empty body's
        assert again.status_code == 200
