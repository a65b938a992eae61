"""The Wire fan-out's start at a broker that is down or does not answer: the API gives up (the
start fails, or `fanout_of`'s timeout cancels it, api/wire_serving.py) and the consumer it was
starting is stopped, not left for the collector with its connection open (aiokafka then reports
it unclosed, and each later attempt would leave one more). The brokers here: a port nothing
listens on, and a socket that accepts and never speaks, as a broker that hangs does."""

from __future__ import annotations

import asyncio
import gc
import socket

import pytest
from aiokafka.errors import KafkaError

from infra.net import free_port
from infra.settings import load_settings
from wire.fanout import DeltaFanout


def fanout_at(tmp_path, port: int) -> DeltaFanout:
    return DeltaFanout(load_settings(env={}, use_stack=False, data_dir=tmp_path / "svc",
                                     kafka_bootstrap=f"127.0.0.1:{port}", topic_namespace="down"))


async def unclosed_after(attempt) -> list[str]:
    """What the loop was told was left unclosed once `attempt` is over and collected."""
    loop = asyncio.get_running_loop()
    reported: list[str] = []
    loop.set_exception_handler(lambda loop, context: reported.append(context["message"]))
    try:
        await attempt()
        await asyncio.sleep(0.1)
        gc.collect()
        await asyncio.sleep(0.1)
    finally:
        loop.set_exception_handler(None)
    return [m for m in reported if m.startswith("Unclosed")]


async def test_a_start_at_a_broker_that_is_down_stops_its_consumer(tmp_path):
    fanout = fanout_at(tmp_path, free_port())

    async def attempt() -> None:
        with pytest.raises((KafkaError, OSError)):
            await fanout.start()

    assert await unclosed_after(attempt) == []
    await fanout.aclose()


async def test_a_start_given_up_on_stops_its_consumer(tmp_path):
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()
    silent.setblocking(False)
    fanout = fanout_at(tmp_path, silent.getsockname()[1])
    accepted: list[socket.socket] = []

    async def attempt() -> None:
        starting = asyncio.ensure_future(fanout.start())
        conn, _ = await asyncio.wait_for(asyncio.get_running_loop().sock_accept(silent), 10)
        accepted.append(conn)  # the consumer connected and asked for metadata: no answer comes
        await asyncio.sleep(0.3)
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(starting, 0.2)  # as fanout_of's timeout, sooner

    try:
        assert await unclosed_after(attempt) == []
    finally:
        await fanout.aclose()
        for conn in accepted:
            conn.close()
        silent.close()
