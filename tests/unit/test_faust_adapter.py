"""The faust adapter (projections/faust_adapter.py) was written against one faust-streaming
version and reaches past its public API at named points: another version fails here, loudly,
until someone has re-checked them; the hooks it overrides must still exist as it uses them."""

from __future__ import annotations

import inspect
import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import faust
from faust.tables import recovery as faust_recovery
from faust.transport.drivers import TRANSPORTS
from faust.transport.drivers import aiokafka as faust_aiokafka

from projections.faust_adapter import FAUST_VERSION, FETCH_MAX_WAIT_MS, Transport, broker_url

ROOT = Path(__file__).resolve().parents[2]
RECHECK = ("faust-streaming changed: re-check each numbered point of projections/faust_adapter.py's "
           "docstring against the new sources, then move FAUST_VERSION and the pyproject.toml pin together")


def test_faust_is_the_version_the_adapter_was_written_against():
    pins = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pinned = [p for p in pins if re.match(r"faust-streaming\b", p)]
    assert pinned == [f"faust-streaming=={FAUST_VERSION}"], RECHECK
    assert version("faust-streaming") == FAUST_VERSION, RECHECK


def test_the_hooks_the_adapter_overrides_are_still_there():
    worker = inspect.signature(faust_aiokafka.AIOKafkaConsumerThread._create_worker_consumer)
    assert list(worker.parameters) == ["self", "transport"], RECHECK
    assert list(inspect.signature(faust_aiokafka.Consumer._new_consumer_thread).parameters) == ["self"], RECHECK
    commit = faust_aiokafka.AIOKafkaConsumerThread.commit
    assert inspect.iscoroutinefunction(commit) and list(inspect.signature(commit).parameters) == ["self", "offsets"], \
        RECHECK
    # faust's default the adapter replaces is still hard-coded where the adapter expects it
    assert "fetch_max_wait_ms=1500" in inspect.getsource(faust_aiokafka.AIOKafkaConsumerThread._create_worker_consumer), \
        RECHECK
    # faust seeks to the committed offsets after the signal in which the adapter commits
    recovery = inspect.getsource(faust_recovery)
    assert re.search(r"on_rebalance_complete\.send\(\)[\s\S]{0,600}perform_seek\(\)", recovery), RECHECK
    # the commit bookkeeping move_to moves along with a seek (point 3): faust still commits up to
    # the first gap past its committed offset, from the attributes move_to sets, under ack_lock
    from faust.transport.consumer import Consumer as FaustConsumer
    new_offset = inspect.getsource(FaustConsumer._new_offset)
    assert all(name in new_offset for name in ("self._acked[tp]", "self._gap[tp]", "self._committed_offset[tp]")), \
        RECHECK
    assert "self._acked_index[tp].difference_update" in new_offset, RECHECK
    assert "with ack_lock:" in inspect.getsource(FaustConsumer.ack), RECHECK
    # the fetch state and wait the adapter reads and widens (point 4): aiokafka's fetcher reads
    # the wait for each request it builds, and does not fetch a partition it holds records of
    from aiokafka.consumer.fetcher import Fetcher
    actions = inspect.getsource(Fetcher._get_actions_per_node)
    assert "self._fetch_max_wait_ms" in actions and "if tp in self._records:" in actions, RECHECK
    # the take (point 5) is faust's take_events with another wait: it relies on the stream's
    # passive drain, its processor list and the generators faust closes when the stream stops
    from faust.streams import Stream
    take = inspect.getsource(Stream.take_events)
    assert all(name in take for name in ("self._enable_passive(", "self._processors.remove(", "self.enable_acks = False")), \
        RECHECK
    assert "self._active_agens" in inspect.getsource(Stream.__init__), RECHECK


async def test_the_worker_consumer_faust_builds_gets_the_short_fetch_wait(tmp_path):
    assert TRANSPORTS.aliases["svckafka"] == "projections.faust_adapter:Transport"
    app = faust.App("svc-adapter-check", broker=broker_url("127.0.0.1:1, 127.0.0.1:2"), web_enabled=False,
                    store="memory://", autodiscover=False, datadir=str(tmp_path / "faust"))
    assert isinstance(app.transport, Transport)
    consumer = app.consumer._thread._create_worker_consumer(app.transport)  # built, never started
    assert consumer._fetch_max_wait_ms == FETCH_MAX_WAIT_MS != 1500
    assert [str(u) for u in app.conf.broker] == ["svckafka://127.0.0.1:1", "svckafka://127.0.0.1:2"]


def test_the_projector_quiets_faust_service_logs_under_the_adapters_module():
    """mode names a service's logger by the module of its class: the projector command's
    logging setup must name the module our consumer classes live in."""
    from cli.commands import projections as command
    from projections.faust_adapter import _Consumer, _ConsumerThread

    assert _Consumer.logger.name == _ConsumerThread.logger.name == "projections.faust_adapter"
    assert f'getLogger("{_Consumer.logger.name}").setLevel(logging.WARNING)' in inspect.getsource(command._logging)


def test_the_projectors_faust_folder_is_under_the_data_dir(tmp_path, monkeypatch):
    """faust keeps a folder per app (`<app id>-data` in the working directory unless told):
    the projector's lives under the stack's data dir, never in the checkout it runs from."""
    from infra.settings import load_settings
    from projections.faust_app import build_app

    checkout = tmp_path / "checkout"
    checkout.mkdir()
    monkeypatch.chdir(checkout)
    data_dir = tmp_path / "data"
    settings = load_settings(env={}, use_stack=False, data_dir=data_dir, kafka_bootstrap="127.0.0.1:1")

    async def nothing(*args) -> None:
        return None

    app = build_app(settings, "svc-data-dir-check", {}, {}, nothing)
    for folder in (app.conf.datadir, app.conf.appdir, app.conf.tabledir):
        assert Path(folder).is_relative_to(data_dir), folder
    assert list(checkout.iterdir()) == []
