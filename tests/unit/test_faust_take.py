"""The projector's batch take (projections/faust_adapter.py, point 5): faust's `take_events` with
the batch timer started by a batch's first record. It must batch and ack as faust's does, and an
idle agent must not wake: faust's own loop waits `within` at a time, whether or not anything came.

A faust stream over an in-memory channel, never connected to a broker (the app is never started)."""

from __future__ import annotations

import asyncio

import faust
import pytest

from projections.faust_adapter import take_events

WITHIN = 0.005


def _new_stream(folder):
    app = faust.App(f"svc-take-{folder.name}", broker="kafka://127.0.0.1:1", web_enabled=False,
                    store="memory://", autodiscover=False, datadir=str(folder))
    app.flow_control.resume()  # a started app resumes it; a paused channel takes no sends
    return app.channel().stream()


@pytest.fixture
async def stream(tmp_path):  # async: faust binds the app to the loop running when it is built
    return _new_stream(tmp_path / "ours")


class _Counted:
    """Counts the stream's waits (the take's loop waits once per turn) and the events it acks."""

    def __init__(self, stream):
        self.waits = 0
        self.acked = []
        wait, ack = stream.wait_for_stopped, stream.ack

        async def counted_wait(*args, **kwargs):
            self.waits += 1
            return await wait(*args, **kwargs)

        async def counted_ack(event):
            self.acked.append(event.value)
            return await ack(event)

        stream.wait_for_stopped, stream.ack = counted_wait, counted_ack


async def _take(stream, take, sends, settle=0.2):
    """Batches `take(stream)` yields for `sends` values sent after it started, and the counts."""
    counted = _Counted(stream)
    batches = []
    agen = take(stream)

    async def consume():
        async for events in agen:
            batches.append([e.value for e in events])

    task = asyncio.create_task(consume())
    await stream.maybe_start()
    await asyncio.sleep(0.05)
    for value in sends:
        await stream.channel.send(value=value)
    await asyncio.sleep(settle)  # let every batch timer run out: a partial batch is yielded after WITHIN
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await stream.stop()
    return batches, counted


def _ours(stream, within=WITHIN):
    return take_events(stream, 3, within)


def _faust(stream, within=WITHIN):
    return stream.take_events(3, within=within)


# faust's batch timer ticks every `within` from the take's start, not from a batch's first record:
# with 5 ms a loaded box (a CI run) let a tick fall between two sends and faust yielded [0, 1]
# first. A timer far longer than the sends take makes both takes' batches depend on the records
# alone; the partial batch is still yielded by each one's timer
BATCH_WITHIN = 1.0


async def test_an_idle_take_waits_once_where_fausts_wakes_every_within(stream, tmp_path):
    # 0.5 s idle: faust's loop turns ~once per WITHIN (up to 100 times; fewer on a busy box), ours
    # waits for a first record once and never wakes; the bound holds however slow the box is
    batches, counted = await _take(stream, _ours, [], settle=0.5)
    assert batches == [] and counted.waits <= 1
    _, theirs = await _take(_new_stream(tmp_path / "faust"), _faust, [], settle=0.5)
    assert theirs.waits > 5  # what the wrapper exists to avoid: faust's loop wakes while idle


async def test_batches_and_acks_as_fausts_take_does(stream, tmp_path):
    settle = BATCH_WITHIN * 1.5
    batches, counted = await _take(stream, lambda s: _ours(s, BATCH_WITHIN), range(8), settle)
    # full batches of 3 as they fill, then the partial one once its timer ran out
    assert batches == [[0, 1, 2], [3, 4, 5], [6, 7]]
    assert counted.acked == list(range(8))  # each acked once, after its batch was consumed
    theirs, faust_counted = await _take(_new_stream(tmp_path / "faust"), lambda s: _faust(s, BATCH_WITHIN),
                                        range(8), settle)
    assert theirs == batches and faust_counted.acked == counted.acked


async def test_the_stream_is_left_as_found(stream):
    enable_acks, processors = stream.enable_acks, list(stream._processors)
    await _take(stream, _ours, range(2))
    assert stream.enable_acks == enable_acks and list(stream._processors) == processors
